package export

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/net/netutil"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/layout"
)

// ServeOptions configures Serve. A zero timeout or cap is its default.
type ServeOptions struct {
	Dir                  string // an export folder, or a collection exported in place
	Addr                 string // default 127.0.0.1:8000
	AllowArchivedScripts bool   // archived files get "sandbox allow-scripts"
	// ReadTimeout bounds reading a request, its headers included.
	ReadTimeout time.Duration
	// WriteTimeout bounds how long a response may make no progress: the
	// deadline moves on with every write, so a slow download of a large
	// video that keeps reading is never cut, a reader that stalls is.
	WriteTimeout time.Duration
	// IdleTimeout bounds how long a kept-alive connection waits for its
	// next request.
	IdleTimeout time.Duration
	// MaxConns caps the connections served at once; more wait to be
	// accepted until one closes.
	MaxConns int
	// Ready is called with the base URL once the server listens.
	Ready func(url string)
}

// DefaultAddr is where folio serve listens unless told otherwise.
const DefaultAddr = "127.0.0.1:8000"

// The defaults of ServeOptions: generous for a browser on a slow link,
// short enough that idle and stalled connections do not pile up.
const (
	DefaultReadTimeout  = 20 * time.Second
	DefaultWriteTimeout = time.Minute
	DefaultIdleTimeout  = 2 * time.Minute
	DefaultMaxConns     = 256
)

// Serve serves an export until ctx is cancelled, then shuts down
// gracefully and returns ctx's error, wrapped: stopping is an interruption
// (exit 130 for the CLI), not a success.
func Serve(ctx context.Context, opts ServeOptions, p archive.Printer) error {
	if p == nil {
		p = archive.Discard
	}
	h, err := NewHandler(opts.Dir, opts.AllowArchivedScripts)
	if err != nil {
		return err
	}
	addr := cmp.Or(opts.Addr, DefaultAddr)
	write := cmp.Or(opts.WriteTimeout, DefaultWriteTimeout)
	read := cmp.Or(opts.ReadTimeout, DefaultReadTimeout)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("serve: listen on %s: %w", addr, err)
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(progressWriter{w, http.NewResponseController(w), write}, r)
		}),
		ReadHeaderTimeout: read,
		ReadTimeout:       read,
		WriteTimeout:      write,
		IdleTimeout:       cmp.Or(opts.IdleTimeout, DefaultIdleTimeout),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(netutil.LimitListener(ln, cmp.Or(opts.MaxConns, DefaultMaxConns))) }()
	if opts.Ready != nil {
		opts.Ready("http://" + ln.Addr().String() + "/")
	}
	select {
	case err := <-errc:
		return fmt.Errorf("serve %s: %w", addr, err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve %s: %w", addr, err)
	}
	return fmt.Errorf("serve %s: stopped: %w", addr, ctx.Err())
}

// progressWriter moves the connection's write deadline on before every
// write, so WriteTimeout bounds a stall, not a whole download. Hiding
// the ResponseWriter's ReadFrom makes http.ServeContent copy in 32 KB
// writes, each with its own deadline (sendfile would send the file in
// one call under one deadline).
type progressWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

func (w progressWriter) Write(b []byte) (int, error) {
	w.rc.SetWriteDeadline(time.Now().Add(w.timeout))
	return w.ResponseWriter.Write(b)
}

// handler serves an export folder read-only. Inside a collection it
// serves only the export's own files and archive/; everywhere it refuses
// dotfiles (.folio/ among them), temp files, databases, config, sources/
// and logs/, symlinks that leave the folder, and directory listings.
// These rules hold for the URL and for the file a symlink leads to.
// Only the export's root page, site/ and the snapshot pages its manifest
// lists get folio's CSP; every other file gets the sandbox.
type handler struct {
	root       string
	collection bool
	sandbox    string
	exported   *exportedPages
}

// NewHandler returns the http.Handler of Serve for dir.
func NewHandler(dir string, allowScripts bool) (http.Handler, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("serve %s: %w", dir, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("serve %s: %w", abs, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("serve %s: not a directory", abs)
	}
	sb := "sandbox"
	if s := Sandbox(allowScripts); s != "" {
		sb += " " + s
	}
	return &handler{root: abs, collection: isDataDir(abs), sandbox: sb, exported: newExportedPages(abs)}, nil
}

// isDataDir reports a collection's data directory, as opposed to an --out
// export (which also has an archive/ folder but none of these).
func isDataDir(dir string) bool {
	for _, name := range []string{archive.StateDir, archive.LegacyDB, archive.ConfigFile, archive.SourcesDir, archive.LogsDir, archive.RemovedDir} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}

// allowedTop are the entries of a collection's root that serve exposes:
// the export's and their .gz siblings.
var allowedTop = map[string]bool{RootPage: true, RootPage + ".gz": true, ManifestFile: true, ManifestFile + ".gz": true,
	SiteDir: true, archive.ArchiveDir: true, RobotsFile: true}

// refusedNames are never served anywhere in the tree.
func refused(name string) bool {
	switch name {
	case archive.ConfigFile, archive.SourcesDir, archive.LogsDir, "ArchiveBox.conf.bak":
		return true
	}
	if strings.HasPrefix(name, ".") || archive.IsTemp(name) {
		return true
	}
	for _, ext := range []string{".sqlite3", ".sqlite3-wal", ".sqlite3-shm", ".sqlite3-journal", ".db"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8", ".htm": "text/html; charset=utf-8",
	".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
	".json": "application/json", ".jsonl": "text/plain; charset=utf-8", ".txt": "text/plain; charset=utf-8",
	".md": "text/plain; charset=utf-8", ".log": "text/plain; charset=utf-8", ".csv": "text/csv; charset=utf-8",
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp",
	".svg": "image/svg+xml", ".ico": "image/x-icon", ".pdf": "application/pdf", ".mp4": "video/mp4",
	".webm": "video/webm", ".mp3": "audio/mpeg", ".m4a": "audio/mp4", ".ogg": "audio/ogg", ".opus": "audio/ogg",
	".wav": "audio/wav", ".warc": "application/warc", ".gz": "application/gzip", ".zst": "application/zstd",
	".mhtml": "multipart/related", ".mht": "multipart/related", ".wacz": "application/zip", ".xml": "text/xml; charset=utf-8",
}

// contentType is the Content-Type of a file served by name. A .warc.gz
// is a WARC (application/warc, as ArchiveBox's wget writes it) served as
// it is, without Content-Encoding: replay tools read its gzip members at
// byte offsets and a client must not gunzip it.
func contentType(name string) string {
	if strings.HasSuffix(strings.ToLower(name), ".warc.gz") {
		return "application/warc"
	}
	e := strings.ToLower(path.Ext(name))
	if t, ok := contentTypes[e]; ok {
		return t
	}
	return mime.TypeByExtension(e)
}

// allowed reports whether rel, slash-separated below the root, may be
// served: no component is refused and, in a collection, it lies in an
// entry of allowedTop.
func (h *handler) allowed(rel string) bool {
	parts := strings.Split(rel, "/")
	for _, p := range parts {
		if refused(p) {
			return false
		}
	}
	return !h.collection || allowedTop[parts[0]]
}

// resolve finds rel below the root with every symlink resolved (none may
// leave the root) and applies allowed to where it really is. It returns
// the file's real path, absolute and relative, and what it is.
func (h *handler) resolve(rel string) (string, string, os.FileInfo, bool) {
	rp, fi, err := layout.ResolveNoSymlinks(h.root, rel)
	if err != nil || rp != "." && !h.allowed(rp) {
		return "", "", nil, false
	}
	return filepath.Join(h.root, filepath.FromSlash(rp)), rp, fi, true
}

// ourPage reports whether rp, a file's resolved path, is one the export
// wrote: its root page, a file under site/, or the index.html of a
// snapshot folder the manifest lists. There is none without a manifest.
func (h *handler) ourPage(rp string) bool {
	dir, name := path.Split(rp)
	switch {
	case rp == RootPage || strings.HasPrefix(rp, SiteDir+"/"):
		return h.exported.current()
	case name == RootPage && strings.HasPrefix(dir, archive.ArchiveDir+"/"):
		return h.exported.has(strings.TrimSuffix(dir, "/"))
	}
	return false
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hdr.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	clean := path.Clean("/" + r.URL.Path)
	rel := strings.TrimPrefix(clean, "/")
	if rel == "" {
		rel = RootPage
	}
	if !h.allowed(rel) {
		http.NotFound(w, r)
		return
	}
	p, rp, st, ok := h.resolve(rel)
	if ok && st.IsDir() {
		if !strings.HasSuffix(r.URL.Path, "/") {
			http.Redirect(w, r, path.Base(clean)+"/", http.StatusMovedPermanently)
			return
		}
		p, rp, st, ok = h.resolve(path.Join(rp, RootPage))
	}
	if !ok || !st.Mode().IsRegular() {
		if h.collection && rel == RootPage && !exists(filepath.Join(h.root, RootPage)) {
			serveNotExported(w, r) // nothing exported yet: say how
			return
		}
		http.NotFound(w, r)
		return
	}
	ours := h.ourPage(rp)
	if ours {
		hdr.Set("Content-Security-Policy", CSP)
	} else {
		hdr.Set("Content-Security-Policy", h.sandbox)
	}
	if ct := contentType(rp); ct != "" {
		hdr.Set("Content-Type", ct)
	}
	name := p
	if gz, gi, ok := h.gzipSibling(rp, p, st, ours); ok {
		hdr.Add("Vary", "Accept-Encoding")
		if r.Header.Get("Range") == "" && acceptsGzip(r.Header.Get("Accept-Encoding")) {
			name = gz
			hdr.Set("Content-Encoding", "gzip")
			st = gi
		}
	}
	f, err := os.Open(name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	http.ServeContent(w, r, "", st.ModTime(), f)
}

// maxVerified bounds the snapshot pages whose .gz sibling is checked
// (detail pages are a few kilobytes); a larger one is served plain.
const maxVerified = 4 << 20

// gzipSibling returns the precompressed sibling of the file at rp (p
// absolute, st its info): a regular file beside it (not a link) that
// passes the same rules. A snapshot folder's index.html.gz that gets
// folio's CSP must decompress to the page itself: the export writes
// the page, and a .gz already in the folder may be archived content.
func (h *handler) gzipSibling(rp, p string, st os.FileInfo, ours bool) (string, os.FileInfo, bool) {
	if strings.HasSuffix(rp, ".gz") {
		return "", nil, false
	}
	gz, greal, gi, ok := h.resolve(rp + ".gz")
	if !ok || greal != rp+".gz" || !gi.Mode().IsRegular() {
		return "", nil, false
	}
	if ours && strings.HasPrefix(rp, archive.ArchiveDir+"/") && !sameGzip(p, gz, st.Size()) {
		return "", nil, false
	}
	return gz, gi, true
}

// sameGzip reports whether the gzip file gz decompresses to the bytes of
// the file p of the given size.
func sameGzip(p, gz string, size int64) bool {
	if size > maxVerified {
		return false
	}
	plain, err := os.ReadFile(p)
	if err != nil {
		return false
	}
	f, err := os.Open(gz)
	if err != nil {
		return false
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return false
	}
	got, err := io.ReadAll(io.LimitReader(zr, int64(len(plain))+1))
	return err == nil && bytes.Equal(got, plain)
}

// acceptsGzip reports whether an Accept-Encoding header allows gzip.
func acceptsGzip(ae string) bool {
	for _, part := range strings.Split(ae, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		name = strings.ToLower(strings.TrimSpace(name))
		if name != "gzip" && name != "*" {
			continue
		}
		q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		if q == "q=0" || q == "q=0.0" || q == "q=0.00" || q == "q=0.000" {
			return false
		}
		return true
	}
	return false
}
