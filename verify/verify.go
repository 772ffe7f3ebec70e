// Package verify proves that a collection's files are still the files
// that were captured: it re-hashes every file of a snapshot folder against
// the folder's hashes/hashes.json, checks the catalog's row against the
// folder and its index, and finds what interrupted work left behind (temp
// files, staging folders of a copy, legacy folders a migration did not
// remove). It changes nothing, except that Options.WriteHashes writes a
// hashes.json for the folders that have none.
package verify

import (
	"context"
	"maps"
	"path"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/archive/catalog"
)

// Kind names what is wrong. Every kind is a problem: a verify that finds
// one exits 3.
type Kind string

const (
	Missing    Kind = "missing"    // a file hashes.json lists is not in the folder
	Changed    Kind = "changed"    // a file's size or sha256 differs from hashes.json
	Extra      Kind = "extra"      // a file the folder holds that hashes.json does not list
	Unreadable Kind = "unreadable" // a file or folder that could not be read
	Manifest   Kind = "hashes"     // hashes.json itself cannot be read or contradicts itself
	Index      Kind = "index"      // the snapshot's index file is missing, truncated or has bad lines
	Stale      Kind = "catalog"    // the catalog disagrees with the folder
	Temp       Kind = "temp"       // a temp file of a write that never finished
	Staging    Kind = "staging"    // a staging folder of a copy that never finished
	LeftBehind Kind = "legacy"     // a legacy folder whose snapshot was already migrated
	WARC       Kind = "warc"       // a WARC file that is truncated, corrupt or whose record digests differ
)

// Kinds lists every kind in the order the summary shows them.
func Kinds() []Kind {
	return []Kind{Missing, Changed, Extra, Unreadable, Manifest, Index, Stale, Temp, Staging, LeftBehind, WARC}
}

// Problem is one finding.
type Problem struct {
	Kind     Kind   `json:"kind"`
	Path     string `json:"path"`     // slash path relative to the data dir
	Snapshot string `json:"snapshot"` // the snapshot folder it belongs to, "" for none
	Detail   string `json:"detail"`
}

// Options tune Run.
type Options struct {
	Workers int // folders checked at once; 0 means 2
	// WriteHashes writes hashes/hashes.json, in ArchiveBox's shape, for
	// the snapshot folders of the current layout that have none; the
	// caller holds the collection lock.
	WriteHashes bool
	// Migrated maps "<url>\x00<timestamp>" of the current layout's
	// snapshots to their folders; a legacy folder found in it was left
	// behind by a migration. Nil skips that check.
	Migrated map[string]string
	// Site also looks for temp files in the collection's own folders that
	// no snapshot holds: the root, and the site/ an export writes.
	Site     bool
	Now      func() time.Time        // for the hashes.json timestamp
	Progress func(done, total int64) // called as folders finish
	Found    func(Problem)           // called for each problem as it is found, one call at a time
}

// Report is what Run found.
type Report struct {
	Snapshots     int   // folders checked
	WithHashes    int   // of them with a hashes.json to check against
	HashesWritten int   // hashes.json files written (Options.WriteHashes)
	Legacy        int   // legacy folders not migrated yet (not a problem)
	Files         int64 // files hashed
	Bytes         int64 // bytes hashed
	Elapsed       time.Duration
	Problems      []Problem // sorted by path
}

// Count returns the number of problems of kind k.
func (r *Report) Count(k Kind) int {
	n := 0
	for _, p := range r.Problems {
		if p.Kind == k {
			n++
		}
	}
	return n
}

// Run checks the catalog entries' folders below the collection c, in
// parallel, and returns what it found. An error is returned only when the
// check itself could not go on (ctx cancelled); problems with the data are
// in the report.
func Run(ctx context.Context, c *archive.Collection, entries []catalog.Entry, opts Options) (Report, error) {
	return RunEach(ctx, c, len(entries), func(fn func(catalog.Entry) error) error {
		for _, e := range entries {
			if err := fn(e); err != nil {
				return err
			}
		}
		return nil
	}, opts)
}

// RunEach is Run for entries streamed by each (as catalog.Each streams
// them), total of them, so that what verify holds does not grow with the
// collection: a folder is checked while the next ones are read.
func RunEach(ctx context.Context, c *archive.Collection, total int, each func(fn func(catalog.Entry) error) error, opts Options) (Report, error) {
	start := time.Now()
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	var (
		mu   sync.Mutex
		rep  Report
		done int64
	)
	add := func(r folderReport) {
		mu.Lock()
		defer mu.Unlock()
		rep.Snapshots++
		rep.Files += r.files
		rep.Bytes += r.bytes
		if r.hashes {
			rep.WithHashes++
		}
		if r.wrote {
			rep.HashesWritten++
		}
		if r.legacy {
			rep.Legacy++
		}
		rep.Problems = append(rep.Problems, r.problems...)
		done++
		if opts.Progress != nil {
			opts.Progress(done, int64(total))
		}
	}
	found := func(p Problem) {
		if opts.Found != nil {
			mu.Lock()
			opts.Found(p)
			mu.Unlock()
		}
	}

	// The workers check the snapshot folders as they are streamed, then
	// the folders that hold them, for what interrupted copies left beside
	// the snapshots.
	const streamAhead = 256
	type job struct {
		e      catalog.Entry
		parent string // "": check e
	}
	// The catalog's stream runs ahead of the workers by up to
	// streamAhead folders. The workers' system calls are raw (rawsys),
	// so a worker keeps its processor until it waits for a job: with a
	// queue as short as the workers are many, the stream ran in bursts
	// of two folders between the workers' waits, each burst a handoff.
	jobs := make(chan job, streamAhead)
	var wg sync.WaitGroup
	for range opts.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := newScratch()
			for j := range jobs {
				if j.parent == "" {
					ch := &checker{c: c, e: j.e, opts: &opts, found: found, scratch: sc}
					add(ch.run(ctx))
					continue
				}
				left := sc.leftBeside(c, j.parent)
				mu.Lock()
				rep.Problems = append(rep.Problems, left...)
				mu.Unlock()
				for _, p := range left {
					found(p)
				}
			}
		}()
	}
	send := func(j job) error {
		select {
		case jobs <- j:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	parents := map[string]bool{}
	err := each(func(e catalog.Entry) error {
		e.Record = nil // the decoded Snapshot is what a check reads
		parents[path.Dir(e.Dir)] = true
		return send(job{e: e})
	})
	if err == nil {
		list := slices.Sorted(maps.Keys(parents))
		if opts.Site {
			list = append(list, SiteFolders...)
		}
		for _, p := range list {
			if err = send(job{parent: p}); err != nil {
				break
			}
		}
	}
	close(jobs)
	wg.Wait()

	sort.Slice(rep.Problems, func(i, j int) bool {
		a, b := rep.Problems[i], rep.Problems[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Kind < b.Kind
	})
	rep.Elapsed = time.Since(start)
	if err == nil {
		err = ctx.Err()
	}
	return rep, err
}

// Uncataloged turns what a walk of the tree (catalog.Drift) found outside
// the catalog's rows into problems: the snapshot folders that could not be
// cataloged, their index missing, unreadable or not parsing (Index, with
// the reason the catalog kept), those of them whose index changed since
// (Stale: a reindex reads them again), and the folders that could not be
// listed (Unreadable). The catalog has no row for any of them, so only
// the walk finds them, every time, until they are fixed.
func Uncataloged(d catalog.Drift) []Problem {
	var out []Problem
	for _, p := range d.Problems {
		pr := Problem{Kind: Unreadable, Path: p.Path, Detail: p.Err.Error()}
		if name := path.Base(p.Path); name == archive.IndexFile || name == archive.LegacyIndexFile {
			pr.Kind, pr.Snapshot = Index, path.Dir(p.Path)
		}
		out = append(out, pr)
	}
	for _, dir := range d.Retry {
		out = append(out, Problem{Kind: Stale, Path: dir, Snapshot: dir,
			Detail: "could not be cataloged, and its index changed since (run 'folio reindex')"})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}
