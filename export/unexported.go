package export

import (
	"net/http"
	"strconv"
)

// notExportedPage is what serve answers for the root page of a collection
// that has not been exported in place: a page saying how to get one,
// rather than a bare 404. Serve itself never exports: it writes nothing
// into the collection ('folio serve --watch' exports first).
const notExportedPage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Not exported yet - folio</title>
</head>
<body>
<h1>This collection has not been exported yet</h1>
<p>folio serves the static site that <code>folio export</code> writes into the collection, and it has none yet. Run</p>
<pre>folio export -D COLLECTION</pre>
<p>with the folder <code>folio serve</code> printed, then reload this page. <code>folio serve --watch</code> exports first and keeps the site current while it serves.</p>
</body>
</html>
`

// serveNotExported answers a collection's root page when there is none.
func serveNotExported(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Content-Security-Policy", CSP)
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	hdr.Set("Content-Length", strconv.Itoa(len(notExportedPage)))
	hdr.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNotFound)
	if r.Method != http.MethodHead {
		w.Write([]byte(notExportedPage))
	}
}
