package export

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/layout"
)

// ServeOptions configures Serve.
type ServeOptions struct {
	Dir                  string // an export folder, or a collection exported in place
	Addr                 string // default 127.0.0.1:8000
	AllowArchivedScripts bool   // archived files get "sandbox allow-scripts"
	// Ready is called with the base URL once the server listens.
	Ready func(url string)
}

// DefaultAddr is where folio serve listens unless told otherwise.
const DefaultAddr = "127.0.0.1:8000"

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
	addr := opts.Addr
	if addr == "" {
		addr = DefaultAddr
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("serve: listen on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
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

// handler serves an export folder read-only. Inside a collection it
// serves only the export's own files and archive/; everywhere it refuses
// dotfiles (.folio/ among them), temp files, databases, config, sources/
// and logs/, symlinks that leave the folder, and directory listings.
type handler struct {
	root       string
	collection bool
	sandbox    string
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
	return &handler{root: abs, collection: isDataDir(abs), sandbox: sb}, nil
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

// allowedTop are the entries of a collection's root that serve exposes.
var allowedTop = map[string]bool{RootPage: true, ManifestFile: true, SiteDir: true, archive.ArchiveDir: true}

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

func contentType(name string) string {
	e := strings.ToLower(path.Ext(name))
	if t, ok := contentTypes[e]; ok {
		return t
	}
	return mime.TypeByExtension(e)
}

// ourPage reports whether rel is a page the export generated (a root page,
// site/ file or a snapshot folder's index.html), as opposed to an archived
// file.
func ourPage(rel string) bool {
	parts := strings.Split(rel, "/")
	switch {
	case len(parts) == 1:
		return true
	case parts[0] == SiteDir:
		return true
	case parts[0] != archive.ArchiveDir || parts[len(parts)-1] != RootPage:
		return false
	case len(parts) == 8 && parts[1] == "users" && parts[3] == "snapshots":
		return true
	case len(parts) == 3:
		_, ok := layout.LegacyTimestamp(parts[1])
		return ok
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
	parts := strings.Split(rel, "/")
	for _, p := range parts {
		if refused(p) {
			http.NotFound(w, r)
			return
		}
	}
	if h.collection && !allowedTop[parts[0]] {
		http.NotFound(w, r)
		return
	}
	p, err := layout.JoinNoSymlinks(h.root, rel)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	st, err := os.Stat(p)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	if st.IsDir() {
		if !strings.HasSuffix(r.URL.Path, "/") {
			http.Redirect(w, r, path.Base(clean)+"/", http.StatusMovedPermanently)
			return
		}
		rel = path.Join(rel, RootPage)
		if p, err = layout.JoinNoSymlinks(h.root, rel); err != nil {
			http.NotFound(w, r)
			return
		}
		if st, err = os.Stat(p); err != nil || !st.Mode().IsRegular() {
			http.NotFound(w, r)
			return
		}
	}
	if !st.Mode().IsRegular() {
		http.NotFound(w, r)
		return
	}
	if ourPage(rel) {
		hdr.Set("Content-Security-Policy", CSP)
	} else {
		hdr.Set("Content-Security-Policy", h.sandbox)
	}
	if ct := contentType(rel); ct != "" {
		hdr.Set("Content-Type", ct)
	}
	name := p
	gz := p + ".gz"
	if gi, err := os.Lstat(gz); err == nil && gi.Mode().IsRegular() && !strings.HasSuffix(rel, ".gz") {
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
