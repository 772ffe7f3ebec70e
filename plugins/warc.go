package plugins

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/folio-archive/folio/archive"
)

// WARC writes warc/<unix ts>.warc.gz: every request and response of the
// snapshot's tab, and the fetches folio's plugins made themselves, as
// WARC/1.1 records (see Recorder). It runs after the plugins that use
// the page, so what they made the page load is in it too. WARC_ENABLED
// (or ArchiveBox's SAVE_WARC) set to false turns it off, and then no
// recorder runs at all.
type WARC struct{ builtin }

func (p *WARC) Run(ctx context.Context, job *Job) Outcome {
	if job.recorderErr != nil {
		return failed("%v", job.recorderErr)
	}
	rec := job.recorder
	if rec == nil {
		return failed("nothing was recorded: the warc plugin ran without a recorder")
	}
	// The spool folder goes before the hashes plugin walks the snapshot.
	defer rec.Close()
	rec.stop()
	if rec.complete() == 0 {
		if err := pageErr(job.Page); err != nil {
			return failed("nothing was recorded: %v", err)
		}
		return noResults("No HTTP exchanges recorded")
	}
	now := time.Now
	if job.Now != nil {
		now = job.Now
	}
	dir := job.PluginDir(p.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return failed("%v", err)
	}
	name := strconv.FormatInt(now().Unix(), 10) + ".warc.gz"
	n := 0
	err := archive.WriteFileWith(filepath.Join(dir, name), 0o644, func(w io.Writer) error {
		var err error
		n, err = rec.WriteTo(ctx, w, name)
		return err
	})
	if err != nil {
		return failed("%v", err)
	}
	if n == 0 {
		os.Remove(filepath.Join(dir, name))
		return noResults("No HTTP exchanges recorded")
	}
	return succeeded(p.name + "/" + name)
}

// startRecorder starts the job's recorder when the warc plugin is among
// ps, and returns ctx carrying it (for Browser.Load) and the function
// that removes its spool folder. Without the warc plugin nothing is
// recorded and nothing costs.
func startRecorder(ctx context.Context, ps []Plugin, job *Job) (context.Context, func()) {
	for _, p := range ps {
		if _, ok := p.(*WARC); !ok {
			continue
		}
		rec, err := NewRecorder(job.Dir, job.Now)
		if err != nil {
			job.recorderErr = fmt.Errorf("start recording: %w", err)
			return ctx, func() {}
		}
		job.recorder = rec
		job.HTTP = rec.Client(job.HTTP)
		return withRecorder(ctx, rec), func() { rec.Close() }
	}
	return ctx, func() {}
}

var _ Plugin = (*WARC)(nil)
