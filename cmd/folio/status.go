package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/archive/catalog"
	"github.com/folio-archive/folio/export"
	"github.com/folio-archive/folio/queue"
)

func init() { commands = append(commands, newStatusCmd) }

// statusReport is what status prints; its JSON form is the --json output.
type statusReport struct {
	Snapshots        int            `json:"snapshots"`
	ByStatus         map[string]int `json:"by_status"`
	ByState          map[string]int `json:"by_state"`
	Failed           int            `json:"failed"`  // finished snapshots that kept nothing
	Partial          int            `json:"partial"` // finished snapshots with some content and a failed plugin
	ByLayout         map[string]int `json:"by_layout"`
	LegacyToMigrate  int            `json:"legacy_to_migrate"`
	LegacyNoIndex    int            `json:"legacy_without_index"`
	Results          int            `json:"results"`
	OnDiskNotIndexed int            `json:"on_disk_not_in_catalog"`
	ChangedOnDisk    int            `json:"changed_on_disk"`
	CatalogOrphans   int            `json:"catalog_rows_without_folder"`
	Unreadable       int            `json:"unreadable"`
	Invalid          int            `json:"invalid"`
	Staging          int            `json:"staging_folders"`
	CatalogBuilt     *time.Time     `json:"catalog_built_at"`
	CatalogUpdated   *time.Time     `json:"catalog_updated_at"`
	Stale            bool           `json:"stale"`
	Queued           int            `json:"queued"` // snapshots queued or started: 'folio add --resume' captures them
	Exported         bool           `json:"exported"`
	ExportWritten    *time.Time     `json:"export_written_at"`
	ExportStale      bool           `json:"export_stale"` // the catalog or the tree changed since the in-place export
	ExportURL        string         `json:"export_url,omitempty"`
	DiskUse          int64          `json:"disk_use_bytes"`
	Next             string         `json:"next,omitempty"`        // the command that comes next, "" when none
	Queue            *queue.Status  `json:"queue,omitempty"`       // the capture job queue, when there is one
	QueueError       string         `json:"queue_error,omitempty"` // why the queue could not be read
}

func newStatusCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Count snapshots, legacy folders, orphans, catalog and export freshness, and say what to run next",
		Long: `Count the snapshots in the catalog by status, by state and by layout, the legacy
archive/<timestamp> folders still waiting for 'folio update --migrate-only' (from
one listing of archive/, so also before the first reindex), the
folders on disk the catalog does not know and the catalog rows whose folder is
gone (a stat-only walk: no index file is read), the entries of invalid/, the
staging folders a copy interrupted by a crash left beside snapshot folders, the
catalog's age, whether the collection was exported in place and whether that
export is older than the tree (the catalog changed since it was written), the
disk use recorded in the catalog, and the command that comes next. Every line
that reports something to do names the command that does it: snapshots left
queued 'folio add --resume' ('folio worker' when the job queue holds them),
failed and partial ones 'folio update --status failed' (or partial), legacy
folders 'folio update --migrate-only', a stale catalog 'folio reindex', a stale
or missing export 'folio export'. The job queue, when there is one, is read
and never written; a queue that cannot be read (a PostgreSQL server down) is
one line saying why, and the rest is reported.

A snapshot's state is its status read with its results: queued, started and
paused as they are; once finished (sealed), archived (some content kept, no
plugin failed), partial (some content kept, some plugin failed) or failed
(nothing kept: every capture method that ran failed or found nothing, only bookkeeping
such as hashes succeeded). 'folio list --status failed' lists the failed ones,
'folio update --status failed' captures them again.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			coll, err := e.open()
			if err != nil {
				return err
			}
			cat, err := catalog.Open(ctx, coll)
			if err != nil {
				return err
			}
			defer cat.Close()
			st, err := cat.Stats(ctx)
			if err != nil {
				return err
			}
			d, err := cat.Drift(ctx, 0)
			if err != nil {
				return err
			}
			p := e.printer()
			for _, prob := range d.Problems {
				p.Warnf("%s", prob.Error())
			}
			warned := len(d.Problems) > 0
			invalid, err := catalog.CountInvalid(coll)
			if err != nil {
				return err
			}
			r := statusReport{
				Snapshots: st.Snapshots, ByStatus: st.ByStatus, ByState: st.ByState, ByLayout: st.ByLayout,
				Failed: st.ByState[archive.StateFailed], Partial: st.ByState[archive.StatePartial],
				LegacyToMigrate: d.Legacy, LegacyNoIndex: st.LegacyNoIndex,
				Results: st.Results, OnDiskNotIndexed: d.New, ChangedOnDisk: d.Changed,
				CatalogOrphans: d.Gone, Unreadable: d.Unreadable, Invalid: invalid, Staging: d.Staging, Stale: d.Stale(), DiskUse: st.ArchiveSize,
			}
			if !st.BuiltAt.IsZero() {
				r.CatalogBuilt = &st.BuiltAt
			}
			if !st.UpdatedAt.IsZero() {
				r.CatalogUpdated = &st.UpdatedAt
			}
			r.Queued = st.ByStatus["queued"] + st.ByStatus["started"]
			if err := r.readExport(ctx, coll, cat); err != nil {
				return err
			}
			if r.Queue, err = queueStatus(ctx, coll); err != nil {
				r.QueueError = err.Error()
			}
			r.Next = r.next()
			if asJSON {
				enc := json.NewEncoder(e.stdout)
				enc.SetIndent("", "    ")
				return enc.Encode(r)
			}
			r.print(e.stdout, time.Now(), warned)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the counts as JSON")
	return cmd
}

// next says which command comes next: the migration while legacy
// folders wait or an interrupted copy left its staging folder, else a
// reindex while the catalog lags behind the tree, else the capture of
// the snapshots left queued, else a retry of the failed snapshots, then
// of the partial ones, else an export older than the catalog (or none
// at all, once there are snapshots to show).
func (r statusReport) next() string {
	switch {
	case r.LegacyToMigrate > 0 || r.Staging > 0:
		return "folio update --migrate-only (add --dry-run to see the plan first)"
	case r.Stale:
		return "folio reindex"
	case r.Queued > 0 && r.queueHolds():
		return "folio worker (captures the snapshots the job queue holds)"
	case r.Queued > 0:
		return "folio add --resume (captures the snapshots left queued)"
	case r.Failed > 0:
		return "folio update --status failed (runs the failed plugins of the failed snapshots again; 'folio list --status failed' lists them)"
	case r.Partial > 0:
		return "folio update --status partial (runs the failed plugins of the partial snapshots again)"
	case r.ExportStale:
		return "folio export (brings the site up to date)"
	case !r.Exported && r.Snapshots > 0:
		return "folio export (writes the site: index.html, then add, update and remove keep it current)"
	}
	return ""
}

// queueHolds reports whether the job queue holds jobs not yet done, for
// 'folio worker' to capture.
func (r statusReport) queueHolds() bool { return r.Queue != nil && r.Queue.Live() > 0 }

// print writes the report; every line that reports something to do
// names the command that does it. warned says the problems of the
// unreadable folders were printed above.
func (r statusReport) print(w io.Writer, now time.Time, warned bool) {
	todo := func(n int, cmd string) string {
		if n == 0 {
			return ""
		}
		return ": " + cmd
	}
	fmt.Fprintf(w, "snapshots          %d (current layout %d, legacy %d)\n", r.Snapshots, r.ByLayout[catalog.LayoutCurrent], r.ByLayout[catalog.LayoutLegacy])
	fmt.Fprintf(w, "by status          %s\n", counts(r.ByStatus))
	fmt.Fprintf(w, "by state           %s\n", counts(r.ByState))
	switch {
	case r.Queued > 0 && r.queueHolds():
		fmt.Fprintf(w, "queued             %s waiting to be captured: 'folio worker' captures the job queue's\n", plural(r.Queued, "snapshot"))
	case r.Queued > 0:
		fmt.Fprintf(w, "queued             %s waiting to be captured: 'folio add --resume' captures them\n", plural(r.Queued, "snapshot"))
	}
	fmt.Fprintf(w, "failed             %s (finished with nothing archived: every capture method failed)%s\n", plural(r.Failed, "snapshot"),
		todo(r.Failed, "'folio update --status failed' runs them again"))
	fmt.Fprintf(w, "partial            %s (some content archived, some plugin failed)%s\n", plural(r.Partial, "snapshot"),
		todo(r.Partial, "'folio update --status partial' runs the failed plugins again"))
	fmt.Fprintf(w, "results            %d\n", r.Results)
	fmt.Fprintf(w, "legacy to migrate  %d archive/<timestamp> folders (%d of those in the catalog without an index file)%s\n", r.LegacyToMigrate, r.LegacyNoIndex,
		todo(r.LegacyToMigrate, "'folio update --migrate-only' moves them"))
	fmt.Fprintf(w, "not in catalog     %d folders on disk, %d changed since cataloged, %d catalog rows without a folder%s\n", r.OnDiskNotIndexed, r.ChangedOnDisk, r.CatalogOrphans,
		todo(r.OnDiskNotIndexed+r.ChangedOnDisk+r.CatalogOrphans, "'folio reindex' catalogs them"))
	switch {
	case r.Unreadable == 0:
		fmt.Fprintf(w, "unreadable         0\n")
	case warned:
		fmt.Fprintf(w, "unreadable         %d (snapshot folders without a readable index; the warnings above say why for each)\n", r.Unreadable)
	default:
		fmt.Fprintf(w, "unreadable         %d (snapshot folders without a readable index; 'folio reindex' says why for each)\n", r.Unreadable)
	}
	fmt.Fprintf(w, "invalid            %d\n", r.Invalid)
	if r.Staging > 0 {
		fmt.Fprintf(w, "interrupted        %s of copies a crash cut short (their sources are intact): 'folio update --migrate-only' settles them\n", plural(r.Staging, "staging folder"))
	}
	fmt.Fprintf(w, "catalog            %s\n", r.catalogAge(now))
	fmt.Fprintf(w, "export             %s\n", r.exportAge(now))
	fmt.Fprintf(w, "disk use           %s (%d bytes, from the catalog)\n", archive.HumanBytes(r.DiskUse), r.DiskUse)
	if r.Next != "" {
		fmt.Fprintf(w, "next               %s\n", r.Next)
	}
	if r.QueueError != "" {
		fmt.Fprintf(w, "queue              not read: %s\n", r.QueueError)
	}
	if r.Queue != nil {
		printQueue(w, r.Queue, now)
	}
}

// catalogAge says when the catalog was built and updated, and whether
// the tree changed since.
func (r statusReport) catalogAge(now time.Time) string {
	if r.CatalogUpdated == nil {
		if r.Stale {
			return "never built; 'folio reindex' builds it from the tree"
		}
		return "never built; the tree holds nothing to catalog yet"
	}
	age := fmt.Sprintf("updated %s (%s ago)", r.CatalogUpdated.Format(time.RFC3339), now.Sub(*r.CatalogUpdated).Round(time.Second))
	if r.CatalogBuilt != nil {
		age = fmt.Sprintf("built %s, %s", r.CatalogBuilt.Format(time.RFC3339), age)
	}
	if r.Stale {
		return age + "; stale: the tree changed since, run 'folio reindex'"
	}
	return age + "; up to date"
}

// exportAge says whether the collection was exported in place, when,
// and whether the export is older than the tree.
func (r statusReport) exportAge(now time.Time) string {
	if !r.Exported {
		return "none yet; 'folio export' writes the site (index.html), then add, update and remove keep it current"
	}
	age := "written by an earlier folio"
	if r.ExportWritten != nil {
		age = fmt.Sprintf("written %s (%s ago)", r.ExportWritten.Format(time.RFC3339), now.Sub(*r.ExportWritten).Round(time.Second))
	}
	if r.ExportStale {
		return age + "; older than the tree: run 'folio export'"
	}
	return age + "; up to date: " + r.ExportURL
}

// readExport looks at the in-place export: an export is older than the
// tree when the catalog changed after it (another generation) or the
// tree changed after the catalog.
func (r *statusReport) readExport(ctx context.Context, coll *archive.Collection, cat *catalog.Catalog) error {
	last, err := export.LastInPlace(coll)
	if err != nil || last == nil {
		return err
	}
	r.Exported = true
	r.ExportURL = "file://" + export.Quote(filepath.ToSlash(coll.Path(export.RootPage)))
	if !last.At.IsZero() {
		r.ExportWritten = &last.At
	}
	gen, err := cat.Generation(ctx)
	if err != nil {
		return err
	}
	r.ExportStale = r.Stale || gen != last.Catalog
	return nil
}

func counts(m map[string]int) string {
	if len(m) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		name := k
		if name == "" {
			name = "(none)"
		}
		parts = append(parts, fmt.Sprintf("%s %d", name, m[k]))
	}
	return strings.Join(parts, ", ")
}
