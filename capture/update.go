package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/archive/catalog"
	"github.com/folio-archive/folio/plugins"
)

// Retry is `folio update` without --migrate-only (ArchiveBox's update
// with filters, and its extract): it runs plugins again on the existing
// snapshots q selects, in place. By default a plugin runs when its newest
// result failed (or was cut short) or when it has none; opts.Plugins
// narrows the plugins, opts.Overwrite runs the ones that did not fail
// too. Whenever a plugin ran, hashes runs last again. A snapshot not
// sealed (queued, or started by a run that was killed) is always taken
// and sealed at the end; paused snapshots and legacy folders are left
// alone.
//
// Each snapshot goes to started, gets its new results in its index.jsonl
// (atomic writes; records of other types and unknown keys survive) and
// is sealed again. A plugin's earlier folder is moved aside before it
// runs and removed only once the new result is recorded; when the new
// run does not succeed the earlier folder comes back, and an earlier
// result that did not fail keeps its record. The next run puts the
// folders of a killed run back the same way (sweepAside). The caller
// holds the collection's lock. Errors are those of Run.
func Retry(ctx context.Context, c *archive.Collection, q catalog.Query, opts Options) (*Stats, error) {
	r, err := newRun(c, opts)
	if err != nil {
		return nil, err
	}
	if r.touched, err = r.openTouched(); err != nil {
		return nil, err
	}
	defer r.touched.Close()
	cat, err := r.catalog(ctx)
	if err != nil {
		return nil, err
	}
	snaps, err := r.selectRetries(ctx, cat, q)
	if cerr := cat.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if opts.DryRun {
		return &r.st, r.writePlan(opts.PlanOut, snaps)
	}
	if len(snaps) == 0 {
		r.p.Infof("Nothing to update: no selected snapshot has a failed or missing plugin.")
		return &r.st, nil
	}
	closeBrowser, err := r.startBrowser(r.retryNeedsBrowser())
	if err != nil {
		return nil, err
	}
	defer closeBrowser()
	runErr := r.captureAll(ctx, snaps)
	if err := r.reindex(); err != nil && runErr == nil {
		runErr = err
	}
	if runErr == nil && r.st.Failed > 0 {
		runErr = fmt.Errorf("%d of %d snapshots have a failed plugin: %w", r.st.Failed, r.st.Updated, archive.ErrPartial)
	}
	return &r.st, runErr
}

// retry is the plan for one existing snapshot.
type retry struct {
	todo   []plugins.Plugin
	status string                    // the snapshot's status before the run
	newest map[string]archive.Result // by plugin and hook name
	aside  map[string]string         // plugin -> its earlier folder, moved aside (absolute)
	done   map[string]bool           // plugins whose folder this run has handled
	shared map[string]bool           // plugins whose folder more than one hook writes
}

// resultKey is how retry.newest keys a result.
func resultKey(plugin, hook string) string { return plugin + "\x00" + hook }

// prior is the newest result of p: the last record of its plugin with
// its hook name or none (a migrated legacy record).
func (rt *retry) prior(p, hook string) (archive.Result, bool) {
	if res, ok := rt.newest[resultKey(p, hook)]; ok {
		return res, true
	}
	res, ok := rt.newest[resultKey(p, "")]
	return res, ok
}

// due reports whether a result's status asks for another run: failed,
// or a run cut short (queued, started, backoff).
func due(status string) bool {
	switch archive.NormalizeStatus(status) {
	case archive.StatusSucceeded, archive.StatusSkipped, plugins.NoResults:
		return false
	}
	return true
}

// plan decides which plugins run again on s; nil means none.
func (r *run) plan(s *snapshot) *retry {
	rt := &retry{status: s.rec.Status, newest: map[string]archive.Result{},
		aside: map[string]string{}, done: map[string]bool{}, shared: map[string]bool{}}
	hooks := map[string]int{}
	for _, p := range r.runner.Plugins {
		if hooks[p.Name()]++; hooks[p.Name()] > 1 {
			rt.shared[p.Name()] = true
		}
	}
	for _, res := range archive.Standing(s.ix.Results()) {
		rt.newest[resultKey(res.Plugin, res.HookName)] = res
	}
	var hashes plugins.Plugin
	for _, p := range r.runner.Plugins {
		if p.Name() == "hashes" {
			hashes = p
			continue
		}
		old, ok := rt.prior(p.Name(), p.HookName())
		if !ok || due(old.Status) || r.opts.Overwrite {
			rt.todo = append(rt.todo, p)
		}
	}
	if hashes == nil && len(rt.todo) > 0 {
		// hashes.json describes the folder: it is redone whenever the
		// folder changes, whichever plugins were chosen.
		all, _ := r.registry.Select([]string{"hashes"}, r.opts.Config)
		if len(all) > 0 {
			hashes = all[0]
		}
	}
	if hashes != nil {
		old, ok := rt.prior(hashes.Name(), hashes.HookName())
		if len(rt.todo) > 0 || !ok || due(old.Status) || r.opts.Overwrite {
			rt.todo = append(rt.todo, hashes) // hashes (order 93) runs after the built-ins
			sortPlugins(rt.todo)
		}
	}
	if len(rt.todo) == 0 && s.rec.Status == "sealed" {
		return nil
	}
	return rt
}

// sortPlugins puts ps in run order, as Registry.Select does.
func sortPlugins(ps []plugins.Plugin) {
	for i := 1; i < len(ps); i++ {
		for j := i; j > 0 && (ps[j].Order() < ps[j-1].Order() ||
			ps[j].Order() == ps[j-1].Order() && ps[j].HookName() < ps[j-1].HookName()); j-- {
			ps[j], ps[j-1] = ps[j-1], ps[j]
		}
	}
}

// selectRetries plans every snapshot q selects and returns those with
// something to do, oldest first.
func (r *run) selectRetries(ctx context.Context, cat *catalog.Catalog, q catalog.Query) ([]*snapshot, error) {
	if q.Sort == "" {
		q.Sort = "timestamp"
	}
	var out []*snapshot
	legacy := 0
	err := cat.Each(ctx, q, func(e catalog.Entry) error {
		switch {
		case e.Layout != catalog.LayoutCurrent || e.IndexFile != archive.IndexFile:
			legacy++
			return nil
		case e.Snapshot.Status == "paused":
			return nil
		}
		if s := r.take(e.Dir); s != nil {
			out = append(out, s)
		}
		return nil
	})
	if legacy > 0 {
		r.p.Warnf("%d legacy snapshot folders left alone: run 'folio update --migrate-only' first", legacy)
	}
	return out, err
}

// take opens the snapshot folder dir and plans its retry; nil when there
// is nothing to do or the folder cannot be read (said as a warning).
func (r *run) take(dir string) *snapshot {
	s, err := openSnapshot(r.c, dir)
	if err != nil {
		r.p.Warnf("%s: %v", dir, err)
		return nil
	}
	rt := r.plan(s)
	if rt == nil {
		return nil
	}
	r.retries[s] = rt
	return s
}

// existing takes the items whose URL the collection has out of r.items
// and plans a retry of each one's newest snapshot (add --update).
func (r *run) existing(ctx context.Context, cat *catalog.Catalog) ([]*snapshot, error) {
	urls := make([]string, len(r.items))
	for i, it := range r.items {
		urls[i] = it.URL
	}
	newest := map[string]catalog.Entry{}
	const chunk = 500 // SQLite's bound parameters per query
	for i := 0; i < len(urls); i += chunk {
		q := catalog.Query{Patterns: urls[i:min(i+chunk, len(urls))], FilterType: catalog.FilterExact, Sort: "timestamp"}
		if err := cat.Each(ctx, q, func(e catalog.Entry) error {
			if e.Layout == catalog.LayoutCurrent && e.IndexFile == archive.IndexFile {
				newest[e.Snapshot.URL] = e // the last one, in timestamp order
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	var out []*snapshot
	kept := r.items[:0]
	for _, it := range r.items {
		e, ok := newest[it.URL]
		if !ok {
			kept = append(kept, it)
			continue
		}
		if s := r.take(e.Dir); s != nil {
			out = append(out, s)
		} else {
			r.p.Infof("%s: in the collection already, nothing to run again (%s)", it.URL, e.Dir)
			r.st.Existing++
		}
	}
	r.items = kept
	return out, nil
}

// retryNeedsBrowser reports whether a planned retry runs a plugin that
// needs the page.
func (r *run) retryNeedsBrowser() bool {
	for _, rt := range r.retries {
		if plugins.NeedsBrowser(rt.todo) {
			return true
		}
	}
	return false
}

// writePlan prints what Retry would run (--dry-run).
func (r *run) writePlan(w io.Writer, snaps []*snapshot) error {
	var b strings.Builder
	runs := 0
	for _, s := range snaps {
		rt := r.retries[s]
		names := make([]string, len(rt.todo))
		for i, p := range rt.todo {
			names[i] = p.Name()
		}
		what := strings.Join(names, ",")
		if what == "" {
			what = "(nothing to run: seal it)"
		}
		runs += len(names)
		fmt.Fprintf(&b, "%s %s %s\n", s.dir, s.rec.URL, what)
	}
	fmt.Fprintf(&b, "[i] Dry run: %d plugin runs on %d snapshots would be done; nothing was changed\n", runs, len(snaps))
	_, err := io.WriteString(w, b.String())
	return err
}

// retryOne runs the planned plugins of one existing snapshot again.
func (r *run) retryOne(ctx context.Context, s *snapshot, rt *retry) {
	err := r.note(s.dir)
	if err == nil && len(rt.todo) > 0 {
		err = s.setStatus("started")
	}
	if err != nil {
		r.fail(s, "", err.Error())
		return
	}
	runner := *r.runner
	runner.Plugins = rt.todo
	runner.Before = func(p plugins.Plugin) error { return r.moveAside(s, rt, p.Name()) }
	job := &plugins.Job{URL: s.rec.URL, Dir: s.abs(), SnapshotID: s.rec.ID, Depth: s.rec.Depth}
	var first *archive.Result
	if len(rt.todo) > 0 {
		err = runner.Capture(ctx, job, false, func(res archive.Result) error {
			r.count(res)
			if res.Status == plugins.Failed && first == nil {
				first = &res
			}
			return r.settle(s, rt, res)
		})
	}
	// A plugin cut short (interrupt, failed write) gets its folder back.
	for plugin := range rt.aside {
		if rerr := r.putBack(s, rt, plugin); rerr != nil {
			r.p.Warnf("%s: %v", s.dir, rerr)
		}
	}
	if ctx.Err() != nil || err != nil {
		// What finished is recorded; the rest is still due for the next
		// update. A sealed snapshot stays sealed.
		if rt.status == "sealed" {
			err = errors.Join(err, s.seal())
		} else if serr := s.setStatus("queued"); serr != nil {
			err = errors.Join(err, serr)
		}
		if ctx.Err() == nil {
			r.fail(s, "", fmt.Sprintf("stopped: %v", err))
		} else if err != nil && !errors.Is(err, ctx.Err()) {
			r.p.Warnf("%s: %v", s.dir, err)
		}
		return
	}
	if s.rec.Title == "" && job.Title != "" {
		s.rec.Title = job.Title
	}
	if err := s.seal(); err != nil {
		r.fail(s, "", err.Error())
		return
	}
	if err := r.fault("sealed", s.dir); err != nil {
		r.fail(s, "", err.Error())
		return
	}
	r.mu.Lock()
	r.st.Sealed++
	r.st.Updated++
	r.mu.Unlock()
	if first != nil {
		r.fail(s, first.Plugin, first.OutputStr)
	}
}

// asideMarker names a plugin folder moved aside while the plugin runs
// again: <plugin>.folio-tmp-old-<unix microseconds before the run>. The
// time says which record is newer than the move (sweepAside).
const asideMarker = archive.TempMarker + "old-"

// moveAside moves the plugin's earlier folder out of the way before the
// plugin runs again, so the new run starts clean and the earlier output
// survives until the new one is recorded. hashes/ holds one file that
// the plugin replaces atomically, so it stays. A folder that several
// hooks of one plugin write stays too: the success of the one hook run
// again would remove, with the earlier folder, what the others wrote.
func (r *run) moveAside(s *snapshot, rt *retry, plugin string) error {
	if plugin == "hashes" || rt.done[plugin] || rt.shared[plugin] {
		return nil
	}
	rt.done[plugin] = true
	dir := filepath.Join(s.abs(), plugin)
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	at := r.now().UTC().Truncate(time.Microsecond)
	aside := dir + asideMarker + strconv.FormatInt(at.UnixMicro(), 10)
	if err := os.Rename(dir, aside); err != nil {
		return fmt.Errorf("move %s aside: %w", dir, err)
	}
	if err := archive.SyncDir(s.abs()); err != nil {
		return err
	}
	rt.aside[plugin] = aside
	return r.fault("aside", s.dir)
}

// settle records a plugin's new result and puts its folder in order: a
// success replaces the earlier folder (removed once the record is
// written); otherwise the earlier folder comes back, and an earlier
// result that did not fail keeps its record (the failure is reported).
func (r *run) settle(s *snapshot, rt *retry, res archive.Result) error {
	aside, moved := rt.aside[res.Plugin]
	if res.Status == plugins.Succeeded {
		if err := s.addResult(res); err != nil {
			return err
		}
		if err := r.fault("result", s.dir); err != nil || !moved {
			return err
		}
		delete(rt.aside, res.Plugin)
		if err := os.RemoveAll(aside); err != nil {
			return fmt.Errorf("remove the earlier %s: %w", aside, err)
		}
		return archive.SyncDir(s.abs())
	}
	if moved {
		if err := r.putBack(s, rt, res.Plugin); err != nil {
			return err
		}
		res.OutputFiles, res.OutputSize = plugins.Outputs(filepath.Join(s.abs(), res.Plugin))
		res.OutputMimetypes = archive.MimetypesBySize(res.OutputFiles)
	}
	if old, ok := rt.prior(res.Plugin, res.HookName); ok && !due(old.Status) {
		r.p.Warnf("%s: %s did not succeed again (%s); its earlier result is kept", s.rec.URL, res.Plugin, res.OutputStr)
		return nil
	}
	if err := s.addResult(res); err != nil {
		return err
	}
	return r.fault("result", s.dir)
}

// putBack restores the plugin's earlier folder, dropping what the new
// run left in its place.
func (r *run) putBack(s *snapshot, rt *retry, plugin string) error {
	aside := rt.aside[plugin]
	delete(rt.aside, plugin)
	return restoreAside(s.abs(), plugin, aside)
}

func restoreAside(snapDir, plugin, aside string) error {
	dir := filepath.Join(snapDir, plugin)
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove the unfinished %s: %w", dir, err)
	}
	if err := os.Rename(aside, dir); err != nil {
		return fmt.Errorf("put back %s: %w", dir, err)
	}
	return archive.SyncDir(snapDir)
}

// sweepAside settles the folders a killed retry left moved aside in the
// snapshot folder abs: when the plugin's newest record is newer than the
// move, the new output was recorded and the earlier folder goes;
// otherwise the earlier folder comes back in place of the unrecorded
// one. It runs before the temp files are removed.
func sweepAside(abs string) error {
	entries, err := os.ReadDir(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("read %s: %w", abs, err)
	}
	var ix *archive.Index
	for _, e := range entries {
		i := strings.Index(e.Name(), asideMarker)
		if i <= 0 {
			continue
		}
		plugin := e.Name()[:i]
		micros, err := strconv.ParseInt(e.Name()[i+len(asideMarker):], 10, 64)
		if err != nil {
			continue // not ours: the temp sweep removes it
		}
		if ix == nil {
			if ix, _, err = archive.ReadIndex(abs); err != nil {
				return err
			}
		}
		aside := filepath.Join(abs, e.Name())
		if recordedSince(ix, plugin, time.UnixMicro(micros)) {
			if err := os.RemoveAll(aside); err != nil {
				return fmt.Errorf("remove the earlier %s: %w", aside, err)
			}
			continue
		}
		if err := restoreAside(abs, plugin, aside); err != nil {
			return err
		}
	}
	return nil
}

// recordedSince reports whether the index holds a result of plugin that
// started at or after t.
func recordedSince(ix *archive.Index, plugin string, t time.Time) bool {
	for _, res := range ix.Results() {
		if res.Plugin == plugin && !res.StartTS.Before(t) {
			return true
		}
	}
	return false
}

// WriteUpdateTable writes the summary of Retry: what was run again, and
// per plugin how many results of each status.
func (s *Stats) WriteUpdateTable(w io.Writer, err error) error {
	var b strings.Builder
	switch {
	case err == nil:
		b.WriteString("[√] Update complete\n")
	case errors.Is(err, context.Canceled):
		b.WriteString("[!] Update interrupted: what finished is recorded, run 'folio update' again for the rest\n")
	case errors.Is(err, archive.ErrPartial):
		fmt.Fprintf(&b, "[X] Update finished: %d snapshots have a failed plugin\n", s.Failed)
	default:
		b.WriteString("[X] Update stopped by an error\n")
	}
	row := func(k string, v any) { fmt.Fprintf(&b, "    %-18s %v\n", k+":", v) }
	row("Updated", s.Updated)
	row("With failures", s.Failed)
	if s.Queued > 0 {
		row("Left to do", s.Queued)
	}
	writePluginTable(&b, s.Results)
	_, werr := io.WriteString(w, b.String())
	return werr
}
