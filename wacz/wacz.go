// Package wacz packages the WARC files of a selection of snapshots as a
// WACZ 1.1.1 file (https://specs.webrecorder.net/wacz/1.1.1/): a zip
// holding the WARCs stored uncompressed under archive/, a CDXJ index of
// their records under indexes/, one page per snapshot in
// pages/pages.jsonl, and datapackage.json with the sha256 and size of
// every file. ReplayWeb.page, pywb and other replay tools open it.
package wacz

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/archive/catalog"
	"github.com/folio-archive/folio/warc"
)

// Version is the WACZ version written.
const Version = "1.1.1"

// Options say what to package and where.
type Options struct {
	Collection *archive.Collection
	Query      catalog.Query // selects the snapshots; Sort and Limit apply
	File       string        // the .wacz to write (replaced atomically)
	Title      string        // the package's title; default "folio archive"
	Version    string        // folio's version, for "software"
	Now        func() time.Time
}

// Stats say what Run packaged.
type Stats struct {
	Snapshots int   // selected
	Pages     int   // snapshots with at least one WARC: the pages of the WACZ
	WARCs     int   // WARC files packaged
	Records   int   // records indexed
	Skipped   int   // WARC files left out because they could not be read
	Bytes     int64 // size of the WACZ
}

// resource is one file of the package, as datapackage.json lists it.
type resource struct {
	Name  string `json:"name"`
	Path  string `json:"path"`
	Hash  string `json:"hash"`
	Bytes int64  `json:"bytes"`
	crc   uint32
	mtime time.Time
}

// page is one line of pages/pages.jsonl.
type page struct {
	ID    string `json:"id"`
	URL   string `json:"url"`
	TS    string `json:"ts"`
	Title string `json:"title,omitempty"`
	Text  string `json:"text,omitempty"`
}

// Run writes the WACZ. A WARC that cannot be read whole is left out with
// one warning naming it, and Run then returns an error wrapping
// archive.ErrPartial after writing the rest. When no selected snapshot has
// a readable WARC, nothing is written.
func Run(ctx context.Context, opts Options, p archive.Printer) (Stats, error) {
	if p == nil {
		p = archive.Discard
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Title == "" {
		opts.Title = "folio archive"
	}
	out, err := filepath.Abs(opts.File)
	if err != nil {
		return Stats{}, err
	}
	lock, err := opts.Collection.Lock("export")
	if err != nil {
		return Stats{}, err
	}
	defer lock.Unlock()
	cat, err := catalog.Open(ctx, opts.Collection)
	if err != nil {
		return Stats{}, err
	}
	defer cat.Close()
	if _, err := cat.Reindex(ctx, catalog.ReindexOptions{Printer: p, Now: opts.Now}); err != nil {
		return Stats{}, err
	}
	scratch, err := os.MkdirTemp(filepath.Dir(out), "."+filepath.Base(out)+archive.TempMarker)
	if err != nil {
		return Stats{}, fmt.Errorf("write %s: %w", out, err)
	}
	defer os.RemoveAll(scratch)
	pk := &packer{opts: opts, p: p, cat: cat, cdx: &sorter{dir: scratch}, names: map[string]bool{}}
	err = archive.WriteFileWith(out, 0o644, func(w io.Writer) error {
		pk.zw = zip.NewWriter(w)
		if err := pk.pack(ctx, scratch); err != nil {
			return err
		}
		return pk.zw.Close()
	})
	if err != nil {
		return pk.st, fmt.Errorf("write %s: %w", out, err)
	}
	if fi, err := os.Stat(out); err == nil {
		pk.st.Bytes = fi.Size()
	}
	if pk.st.Skipped > 0 {
		what := fmt.Sprintf("%d WARC files could not be read and were left out", pk.st.Skipped)
		if pk.st.Skipped == 1 {
			what = "1 WARC file could not be read and was left out"
		}
		return pk.st, fmt.Errorf("%s: %w", what, archive.ErrPartial)
	}
	return pk.st, nil
}

type packer struct {
	opts  Options
	p     archive.Printer
	cat   *catalog.Catalog
	zw    *zip.Writer
	cdx   *sorter
	names map[string]bool // WARC names taken in archive/
	res   []resource
	st    Stats
	pages *os.File
	penc  *json.Encoder
	batch []pendingPage
}

type pendingPage struct {
	dir string
	pg  page
}

func (pk *packer) pack(ctx context.Context, scratch string) error {
	pagesPath := filepath.Join(scratch, "pages.jsonl")
	var err error
	if pk.pages, err = os.Create(pagesPath); err != nil {
		return err
	}
	defer pk.pages.Close()
	pk.penc = json.NewEncoder(pk.pages)
	pk.penc.SetEscapeHTML(false)
	if err := pk.penc.Encode(map[string]string{"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}); err != nil {
		return err
	}
	q := pk.opts.Query
	err = pk.cat.Each(ctx, q, func(e catalog.Entry) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		pk.st.Snapshots++
		pk.p.Progress("wacz", int64(pk.st.Snapshots), 0)
		return pk.snapshot(ctx, e)
	})
	if err == nil {
		err = pk.flushPages(ctx)
	}
	if err == nil && pk.st.WARCs == 0 {
		err = fmt.Errorf("none of the %d selected snapshots has a WARC file that could be read: nothing to package", pk.st.Snapshots)
	}
	if err == nil {
		err = pk.pages.Close()
	}
	if err != nil {
		return err
	}
	files := map[string]string{"pages/pages.jsonl": pagesPath}
	idx, err := pk.cdx.writeIndex()
	if err != nil {
		return err
	}
	for k, v := range idx {
		files[k] = v
	}
	names := make([]string, 0, len(files))
	for k := range files {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := pk.addFile(name, files[name], pk.opts.Now()); err != nil {
			return err
		}
	}
	return pk.writePackage()
}

// snapshot packages the WARCs of one snapshot and notes its page.
func (pk *packer) snapshot(ctx context.Context, e catalog.Entry) error {
	abs := pk.opts.Collection.Path(e.Dir)
	s := e.Snapshot
	pg := page{ID: s.ID, URL: s.URL, Title: s.Title}
	if pg.ID == "" {
		pg.ID = path.Base(e.Dir)
	}
	var captured time.Time
	found := false
	for _, d := range warc.Dirs {
		list, err := os.ReadDir(filepath.Join(abs, filepath.FromSlash(d)))
		if err != nil {
			continue // no such folder (or not one: a symlink is not followed)
		}
		for _, de := range list {
			if !de.Type().IsRegular() || !warc.IsWARC(de.Name()) || archive.IsTemp(de.Name()) {
				continue
			}
			rel := e.Dir + "/" + d + "/" + de.Name()
			t, ok, err := pk.warcFile(rel, path.Base(e.Dir), s.URL)
			if err != nil {
				return err
			}
			if ok {
				found = true
				if captured.IsZero() || (!t.IsZero() && t.Before(captured)) {
					captured = t
				}
			}
		}
	}
	if !found {
		return nil
	}
	if captured.IsZero() {
		captured = s.BookmarkedAt
	}
	pg.TS = captured.UTC().Format(time.RFC3339)
	pk.st.Pages++
	pk.batch = append(pk.batch, pendingPage{dir: e.Dir, pg: pg})
	if len(pk.batch) == 200 {
		return pk.flushPages(ctx)
	}
	return nil
}

// flushPages writes the pages waiting for their captured text.
func (pk *packer) flushPages(ctx context.Context) error {
	if len(pk.batch) == 0 {
		return nil
	}
	dirs := make([]string, len(pk.batch))
	for i, b := range pk.batch {
		dirs[i] = b.dir
	}
	texts, err := pk.cat.Texts(ctx, dirs, catalog.MaxText)
	if err != nil {
		return err
	}
	for _, b := range pk.batch {
		b.pg.Text = texts[b.dir]
		if err := pk.penc.Encode(b.pg); err != nil {
			return err
		}
	}
	pk.batch = pk.batch[:0]
	return nil
}

// warcFile indexes the WARC file rel (relative to the collection) and
// copies it into archive/; a file that cannot be read whole is left out
// with a warning (ok false). It returns the time of the first response
// for url, the snapshot's page.
func (pk *packer) warcFile(rel, owner, url string) (time.Time, bool, error) {
	p := pk.opts.Collection.Path(rel)
	name := pk.nameFor(owner, path.Base(rel))
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		pk.skip(rel, err)
		return time.Time{}, false, nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		pk.skip(rel, err)
		return time.Time{}, false, nil
	}
	h := newSums()
	var lines []string
	var page time.Time
	_, err = warc.ReadFrom(io.TeeReader(f, h), rel, false, func(r warc.Record) error {
		if r.Shared {
			return errors.New("gzipped whole, not one gzip member per record: replay tools cannot read its records by offset")
		}
		if l := cdxLine(r, name); l != "" {
			lines = append(lines, l)
		}
		if page.IsZero() && r.Type == "response" && r.URI == url {
			page = r.Date
		}
		return nil
	})
	if err == nil {
		_, err = io.Copy(h, f) // whatever follows the last record is packaged too
	}
	if err != nil {
		pk.skip(rel, err)
		return time.Time{}, false, nil
	}
	if h.n != st.Size() {
		pk.skip(rel, errors.New("changed while it was read"))
		return time.Time{}, false, nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return time.Time{}, false, fmt.Errorf("read %s: %w", rel, err)
	}
	r := h.resource("archive/"+name, st.ModTime())
	if err := pk.copyEntry(r, f, rel); err != nil {
		return time.Time{}, false, err
	}
	pk.names[name] = true
	pk.st.WARCs++
	pk.st.Records += len(lines)
	return page, true, pk.cdx.add(lines)
}

func (pk *packer) skip(rel string, err error) {
	pk.st.Skipped++
	msg := err.Error()
	if !strings.Contains(msg, rel) {
		msg = rel + ": " + msg
	}
	pk.p.Warnf("left out of the WACZ: %s", msg)
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// nameFor is the file name of a snapshot's WARC in archive/: the
// snapshot folder's name and the file's, made unique.
func (pk *packer) nameFor(owner, base string) string {
	name := unsafeName.ReplaceAllString(owner+"-"+base, "_")
	ext := ".warc"
	if strings.HasSuffix(name, ".warc.gz") {
		ext = ".warc.gz"
	}
	stem := strings.TrimSuffix(name, ext)
	for i := 2; pk.names[name]; i++ {
		name = fmt.Sprintf("%s-%d%s", stem, i, ext)
	}
	return name
}

// addFile packages the scratch file p as name.
func (pk *packer) addFile(name, p string, mtime time.Time) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	h := newSums()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("read %s: %w", p, err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	return pk.copyEntry(h.resource(name, mtime), f, p)
}

// stored is the header of a stored (uncompressed) entry of n bytes.
// CreateRaw writes the header's fields as they are, so the MS-DOS date
// and time that zip tools show are set here too (zero reads as the
// invalid 1980-00-00).
func stored(name string, crc uint32, n uint64, mtime time.Time) *zip.FileHeader {
	t := mtime.UTC()
	if t.Year() < 1980 {
		t = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return &zip.FileHeader{Name: name, Method: zip.Store, CRC32: crc, CompressedSize64: n, UncompressedSize64: n,
		Modified:     t,
		ModifiedDate: uint16(t.Day() + int(t.Month())<<5 + (t.Year()-1980)<<9),
		ModifiedTime: uint16(t.Second()/2 + t.Minute()<<5 + t.Hour()<<11)}
}

// copyEntry copies r's file (open at its start) into the zip, stored, and
// checks it is the file that was hashed.
func (pk *packer) copyEntry(r resource, f io.Reader, what string) error {
	w, err := pk.zw.CreateRaw(stored(r.Path, r.crc, uint64(r.Bytes), r.mtime))
	if err != nil {
		return err
	}
	c := crc32.NewIEEE()
	n, err := io.Copy(io.MultiWriter(w, c), io.LimitReader(f, r.Bytes))
	if err != nil {
		return fmt.Errorf("read %s: %w", what, err)
	}
	if n != r.Bytes || c.Sum32() != r.crc {
		return fmt.Errorf("read %s: the file changed while it was packaged", what)
	}
	pk.res = append(pk.res, r)
	return nil
}

// writePackage writes datapackage.json and datapackage-digest.json.
func (pk *packer) writePackage() error {
	created := pk.opts.Now().UTC().Format(time.RFC3339)
	dp := struct {
		Profile     string     `json:"profile"`
		WACZVersion string     `json:"wacz_version"`
		Title       string     `json:"title"`
		Created     string     `json:"created"`
		Software    string     `json:"software"`
		Resources   []resource `json:"resources"`
	}{"data-package", Version, pk.opts.Title, created, strings.TrimSpace("folio " + pk.opts.Version), pk.res}
	if dp.Resources == nil {
		dp.Resources = []resource{}
	}
	data, err := json.MarshalIndent(dp, "", "  ")
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	digest, err := json.MarshalIndent(map[string]string{"path": "datapackage.json", "hash": "sha256:" + hex.EncodeToString(sum[:])}, "", "  ")
	if err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{"datapackage.json", data}, {"datapackage-digest.json", digest}} {
		// Sizes and CRC in the local header (no data descriptor), as for
		// every entry: readers that stream a zip need them there.
		n := uint64(len(f.data))
		w, err := pk.zw.CreateRaw(stored(f.name, crc32.ChecksumIEEE(f.data), n, pk.opts.Now()))
		if err != nil {
			return err
		}
		if _, err := w.Write(f.data); err != nil {
			return err
		}
	}
	return nil
}

// sums hashes what is written to it as a zip entry and datapackage.json
// need: size, CRC-32 and sha256.
type sums struct {
	n   int64
	crc hash.Hash32
	sha hash.Hash
}

func newSums() *sums { return &sums{crc: crc32.NewIEEE(), sha: sha256.New()} }

func (s *sums) Write(p []byte) (int, error) {
	s.n += int64(len(p))
	s.crc.Write(p)
	s.sha.Write(p)
	return len(p), nil
}

func (s *sums) resource(name string, mtime time.Time) resource {
	return resource{Name: path.Base(name), Path: name, Hash: "sha256:" + hex.EncodeToString(s.sha.Sum(nil)),
		Bytes: s.n, crc: s.crc.Sum32(), mtime: mtime}
}
