package migrate

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/layout"
)

// Action says what the migration does with one entry of a Plan.
type Action string

// Actions of a Plan.
const (
	// ActionMove moves a folder to its current path: a rename on one
	// filesystem, else a verified copy and then deletion of the source.
	ActionMove Action = "move"
	// ActionIndex writes index.jsonl of a folder that is already at its
	// current path.
	ActionIndex Action = "index"
	// ActionCreate creates the folder of a snapshot that has none on disk
	// (a database row never captured, or pruned) holding its index.jsonl.
	ActionCreate Action = "create"
	// ActionInvalid moves an unidentifiable legacy folder to
	// invalid/<YYYYMMDD>/<name>.
	ActionInvalid Action = "invalid"
	// ActionUnlink removes an archive/<timestamp> compatibility symlink.
	ActionUnlink Action = "unlink"
	// ActionCrawl renames a crawl folder named by a dashed id to its
	// compact id.
	ActionCrawl Action = "crawl"
	// ActionMerge merges a second folder of a snapshot (its 0.9 folder
	// named by a dashed id beside its archive/<timestamp> folder, say) into
	// the destination the first one moves to: copied without replacing
	// anything, verified, then deleted. Merges run after every move.
	ActionMerge Action = "merge"
	// ActionSkip leaves an entry alone, for Reason.
	ActionSkip Action = "skip"
	// ActionLeave leaves a folder that holds a snapshot the migration
	// cannot take, for Reason; the run reports it as failed.
	ActionLeave Action = "leave"
)

// Step is one entry of a Plan. Paths are slash paths relative to the data
// directory.
type Step struct {
	Action Action
	Source string // "" for ActionCreate
	Dest   string // "" for ActionUnlink and ActionSkip
	Reason string // why an entry is skipped or invalid
	Risk   string // set by CheckRisks: why the run may still refuse the folder
	Phase  int    // 1: legacy archive/<timestamp> entries; 2: 0.9 folders and database rows
	Item   *Item  // the snapshot of a move, index or create step
	Crawl  *Crawl // the crawl of an ActionCrawl step

	started bool // set by the executor when the step begins
}

// Name is how output lines name the step's entry: the legacy folder name,
// else the snapshot id.
func (s *Step) Name() string {
	switch {
	case s.Phase == 1 && s.Source != "":
		return path.Base(s.Source)
	case s.Item != nil:
		return s.Item.Snapshot.ID
	case s.Source != "":
		return s.Source
	}
	return s.Dest
}

// Plan is everything a migration will do, decided before anything
// changes: --dry-run prints it, Run executes it.
type Plan struct {
	Steps []Step
	// Current counts snapshots already at the current layout.
	Current int
	// DBVersion is the legacy database's schema ("" when there is none).
	DBVersion string
}

// Count returns how many steps have action a.
func (p *Plan) Count(a Action) int {
	n := 0
	for i := range p.Steps {
		if p.Steps[i].Action == a {
			n++
		}
	}
	return n
}

// Work reports whether executing the plan would change anything.
func (p *Plan) Work() int { return len(p.Steps) - p.Count(ActionSkip) - p.Count(ActionLeave) }

// NewPlan decides what to do with everything inv holds. now dates the
// invalid/ folder (UTC). It only looks at the disk (to see which
// destinations exist); nothing is changed.
func NewPlan(c *archive.Collection, inv *Inventory, now time.Time) (*Plan, error) {
	p := &Plan{Current: inv.Current, DBVersion: inv.DBVersion}
	exists := func(rel string) bool {
		_, err := os.Lstat(c.Path(rel))
		return err == nil
	}
	for _, s := range inv.Symlinks {
		p.Steps = append(p.Steps, Step{Action: ActionUnlink, Source: s, Phase: 1})
	}
	for _, cr := range inv.Crawls {
		if cr.Dir == "" || !layout.IsDashedID(path.Base(cr.Dir)) {
			continue
		}
		dest := path.Join(path.Dir(cr.Dir), cr.ID)
		if !layout.IsCompactID(cr.ID) {
			p.Steps = append(p.Steps, Step{Action: ActionSkip, Source: cr.Dir, Phase: 2, Reason: fmt.Sprintf("crawl id %q is not 32 hex digits", cr.ID)})
			continue
		}
		p.Steps = append(p.Steps, Step{Action: ActionCrawl, Source: cr.Dir, Dest: dest, Phase: 2, Crawl: cr})
	}
	planned := map[string]string{} // destination -> source that claims it
	var phase2, merges []Step
	for i := range inv.Items {
		it := &inv.Items[i]
		st := Step{Item: it, Source: it.Source, Phase: 2}
		if isLegacySource(it.Source) {
			st.Phase = 1
		}
		date := it.Snapshot.BookmarkedAt
		if date.IsZero() {
			date = it.Snapshot.CreatedAt
		}
		dest, err := layout.SnapshotDir(it.User, date, it.Snapshot.URL, it.Snapshot.ID)
		prev, clash := planned[dest]
		switch {
		case err != nil:
			st.Action, st.Reason = ActionSkip, err.Error()
		case clash && it.Source != "" && prev != "":
			// The destination names the snapshot's id: this is a second
			// folder of the same snapshot.
			st.Action, st.Dest = ActionMerge, dest
			merges = append(merges, st)
			continue
		case clash:
			st.Action, st.Reason = ActionSkip, fmt.Sprintf("%s is also the destination of %s", dest, describe(prev))
		default:
			st.Dest = dest
			planned[dest] = it.Source
			switch {
			case it.Source == "" && exists(dest):
				st.Action, st.Source = ActionIndex, dest
			case it.Source == "":
				st.Action = ActionCreate
			case it.Source == dest:
				st.Action = ActionIndex
			default:
				st.Action = ActionMove
			}
		}
		if st.Phase == 1 {
			p.Steps = append(p.Steps, st)
		} else {
			phase2 = append(phase2, st)
		}
	}
	bucket := layout.Bucket(now.UTC())
	taken := map[string]bool{}
	for _, inval := range inv.Invalid {
		base := path.Base(inval.Source)
		dest := ""
		for n := 0; ; n++ {
			name := base
			if n > 0 {
				name = base + "_" + strconv.Itoa(n)
			}
			d := path.Join(archive.InvalidDir, bucket, name)
			if !taken[d] && !exists(d) {
				dest = d
				break
			}
		}
		taken[dest] = true
		p.Steps = append(p.Steps, Step{Action: ActionInvalid, Source: inval.Source, Dest: dest, Reason: inval.Reason, Phase: 1})
	}
	p.Steps = append(append(p.Steps, phase2...), merges...)
	for _, sk := range inv.Skipped {
		p.Steps = append(p.Steps, Step{Action: ActionSkip, Source: sk.Source, Reason: sk.Reason, Phase: 1})
	}
	for _, sk := range inv.Stranded {
		p.Steps = append(p.Steps, Step{Action: ActionLeave, Source: sk.Source, Reason: sk.Reason, Phase: 1})
	}
	return p, nil
}

func describe(src string) string {
	if src == "" {
		return "a snapshot without a folder"
	}
	return src
}

// isLegacySource reports whether src is a top-level archive/<name> folder.
func isLegacySource(src string) bool {
	rest, ok := strings.CutPrefix(src, archive.ArchiveDir+"/")
	return ok && rest != "" && !strings.Contains(rest, "/")
}

// Format writes the plan as --dry-run shows it: what moves where, what
// goes to invalid/, what is skipped and why, then the totals.
func (p *Plan) Format(w io.Writer) error {
	var b strings.Builder
	for i := range p.Steps {
		s := &p.Steps[i]
		switch s.Action {
		case ActionMove:
			fprintq(&b, "move     %s -> %s\n", s.Source, s.Dest)
		case ActionIndex:
			fprintq(&b, "index    %s/index.jsonl\n", s.Dest)
		case ActionCreate:
			fprintq(&b, "create   %s/index.jsonl (no folder on disk)\n", s.Dest)
		case ActionInvalid:
			fprintq(&b, "invalid  %s -> %s (%s)\n", s.Source, s.Dest, s.Reason)
		case ActionUnlink:
			fprintq(&b, "unlink   %s (symlink into archive/users)\n", s.Source)
		case ActionCrawl:
			fprintq(&b, "crawl    %s -> %s\n", s.Source, s.Dest)
		case ActionMerge:
			fprintq(&b, "merge    %s -> %s (a second folder of snapshot %s)\n", s.Source, s.Dest, s.Item.Snapshot.ID)
		case ActionSkip:
			fprintq(&b, "skip     %s (%s)\n", s.Source, s.Reason)
		case ActionLeave:
			fprintq(&b, "leave    %s (%s)\n", s.Source, s.Reason)
		}
		if s.Risk != "" {
			fprintq(&b, "         may be refused: %s\n", s.Risk)
		}
	}
	fmt.Fprintf(&b, "\n%d to move, %d to merge, %d to index, %d to create, %d invalid, %d symlinks to remove, %d crawl folders to rename, %d skipped, %d left behind, %d already current\n",
		p.Count(ActionMove), p.Count(ActionMerge), p.Count(ActionIndex), p.Count(ActionCreate), p.Count(ActionInvalid),
		p.Count(ActionUnlink), p.Count(ActionCrawl), p.Count(ActionSkip), p.Count(ActionLeave), p.Current)
	if n := p.Count(ActionLeave); n > 0 {
		fmt.Fprintf(&b, "%d folders hold snapshots the migration cannot take; the run will report them as failed\n", n)
	}
	risky := 0
	for i := range p.Steps {
		if p.Steps[i].Risk != "" {
			risky++
		}
	}
	if risky > 0 {
		fmt.Fprintf(&b, "%d folders may be refused by the run (marked 'may be refused' above); it leaves them where they are and exits 3\n", risky)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// lexists reports whether an entry exists at p without following a final
// symlink.
func lexists(p string) (bool, error) {
	_, err := os.Lstat(p)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return false, err
}
