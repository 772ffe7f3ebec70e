package capture

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/layout"
	"github.com/folio-archive/folio/plugins"
)

// Pending is a snapshot waiting to be captured: its id and its folder,
// relative to the data directory. It is what a job queue carries.
type Pending struct {
	ID  string `json:"snapshot_id"`
	Dir string `json:"dir"`
}

// ErrNotCaptured means a snapshot's capture did not reach its seal (the
// browser or a write failed): the snapshot stays queued and the capture
// is to be tried again.
var ErrNotCaptured = errors.New("capture did not finish")

// Capturer captures one snapshot at a time, by folder, for the workers
// of a job queue (folio worker). It writes only inside the snapshot's
// folder: it keeps no touch log and updates no catalog, which belongs to
// the one machine that owns it. Close stops its browser.
type Capturer struct {
	r     *run
	close func()
}

// NewCapturer prepares the plugins of opts (Plugins, Config, Browser,
// Printer, Now, IDs, Fault; the input options are not used) and starts
// Chromium when a plugin needs it.
func NewCapturer(c *archive.Collection, opts Options) (*Capturer, error) {
	opts.Depth = 0 // a queued snapshot's links are not followed
	r, err := newRun(c, opts)
	if err != nil {
		return nil, err
	}
	closeBrowser, err := r.startBrowser(plugins.NeedsBrowser(r.runner.Plugins))
	if err != nil {
		return nil, err
	}
	return &Capturer{r: r, close: closeBrowser}, nil
}

// Close stops the browser the Capturer started.
func (w *Capturer) Close() { w.close() }

// Capture captures the snapshot p when it is still queued or started,
// and returns nil when it is sealed (now or before: a job done twice
// captures once). The caller holds the job's claim on the snapshot, so
// the temp files a killed worker left in the folder are its to remove;
// the results that worker recorded are replaced, each by an atomic write,
// as the plugins run again. It returns ErrNotCaptured (wrapped) when the
// capture stopped before the seal, and the context's error when
// interrupted; the snapshot is left queued either way. A job whose folder
// is not a snapshot folder of the current layout, or lies below a
// symlinked folder of archive/users/, is refused (ErrNotSnapshotFolder or
// layout.ErrLinkedFolder, wrapped) before anything is written.
func (w *Capturer) Capture(ctx context.Context, p Pending) error {
	if err := CheckDir(w.r.c, p.Dir); err != nil {
		return err
	}
	s, err := openSnapshot(w.r.c, p.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("open %s: %w", p.Dir, err)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", p.Dir, err)
	}
	if s.rec.ID != p.ID {
		return fmt.Errorf("%s holds snapshot %s, not %s", p.Dir, s.rec.ID, p.ID)
	}
	if !Unfinished(s.rec.Status) {
		return nil
	}
	if err := w.r.sweep(p.Dir); err != nil {
		return err
	}
	w.r.captureOne(ctx, s)
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.rec.Status != "sealed" {
		return fmt.Errorf("%s: %w (left %s)", p.Dir, ErrNotCaptured, s.rec.Status)
	}
	return nil
}

// ErrNotSnapshotFolder means a job names a folder that is not a snapshot
// folder of the current layout.
var ErrNotSnapshotFolder = errors.New("not a snapshot folder archive/users/<user>/snapshots/<date>/<domain>/<id>")

// CheckDir refuses dir (relative to the data directory, slash-separated,
// as a job carries it) unless it is a snapshot folder of the current
// layout, archive/users/<user>/snapshots/<date>/<domain>/<id>, with no
// symlink among its folders below archive/users/ (which no reader
// follows): a worker writes nowhere else.
func CheckDir(c *archive.Collection, dir string) error {
	parts := strings.Split(dir, "/")
	if !filepath.IsLocal(dir) || path.Clean(dir) != dir || len(parts) != 7 ||
		parts[0]+"/"+parts[1] != archive.UsersDir || parts[3] != "snapshots" || archive.IsTemp(parts[6]) {
		return fmt.Errorf("job folder %q: %w", dir, ErrNotSnapshotFolder)
	}
	if err := layout.RealFolders(c.Dir, dir); err != nil {
		return fmt.Errorf("job folder %s: %w", dir, err)
	}
	return nil
}

// Unfinished reports whether a snapshot status waits for a capture.
func Unfinished(status string) bool { return status == "queued" || status == "started" }

// ListUnfinished lists the current-layout snapshots of the tree whose
// index.jsonl says queued or started, reading every snapshot's index (no
// catalog: a worker may run on a machine that does not own it). The tree
// is listed level by level and only real folders are entered, as the
// entries' types say: folders below a symlink are skipped, as every
// reader skips them, without a stat per snapshot. Folders whose index
// cannot be read are passed to onError and skipped.
func ListUnfinished(c *archive.Collection, onError func(error)) ([]Pending, error) {
	dirs := []string{archive.UsersDir}
	// user, "snapshots", date, domain, id: the levels below archive/users.
	for level := range 5 {
		var next []string
		for _, dir := range dirs {
			entries, err := os.ReadDir(c.Path(dir))
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				onError(err)
				continue
			}
			for _, e := range entries {
				name := e.Name()
				if !e.IsDir() || archive.IsTemp(name) || level == 1 && name != "snapshots" {
					continue // (IsDir is false for a symlink)
				}
				next = append(next, dir+"/"+name)
			}
		}
		dirs = next
	}
	var out []Pending
	for _, rel := range dirs {
		ix, _, err := archive.ReadIndex(c.Path(rel))
		if errors.Is(err, fs.ErrNotExist) {
			continue // a folder without an index is no snapshot
		}
		if err != nil {
			onError(err)
			continue
		}
		rec, ok := ix.Snapshot()
		if !ok || !Unfinished(rec.Status) {
			continue
		}
		out = append(out, Pending{ID: rec.ID, Dir: rel})
	}
	return out, nil
}
