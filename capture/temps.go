package capture

import (
	"path"
	"path/filepath"
	"strings"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/plugins"
)

// TouchedFile is the archive.TouchLog of 'folio add': the snapshot
// folders a run creates or captures into, noted before it writes there,
// so that the next add removes the temp files a kill left in them (and
// the half-made folders beside them) without looking anywhere else.
const TouchedFile = archive.StateDir + "/add.touched"

// openTouched removes what a killed add left in the folders it noted,
// and the Chromium profiles killed runs left in $TMPDIR, and returns the
// log of this run. The caller holds the collection's lock.
func (r *run) openTouched() (*archive.TouchLog, error) {
	plugins.RemoveStaleProfiles()
	return archive.OpenTouchLog(r.c.Path(TouchedFile), r.sweep, func(err error) { r.p.Warnf("%v", err) })
}

// note records the snapshot folder dir before this run writes in it (a
// Capturer keeps no log: its queue's claim says where it writes).
func (r *run) note(dir string) error {
	if r.touched == nil {
		return nil
	}
	return r.touched.Note(dir)
}

// sweep settles the plugin folders a killed update left moved aside
// (sweepAside) and removes add's own leftovers of the snapshot folder dir: the
// folder it was being made in (dir's name, TempMarker and a suffix,
// beside it) and the temp files of index and output writes inside it.
// The temp file of an export's page there is the export's to remove.
func (r *run) sweep(dir string) error {
	abs := r.c.Path(dir)
	if err := sweepAside(abs); err != nil {
		return err
	}
	staging := path.Base(dir) + archive.TempMarker
	if err := archive.RemoveTemps(filepath.Dir(abs), func(name string) bool { return strings.HasPrefix(name, staging) }); err != nil {
		return err
	}
	return archive.RemoveTempsBelow(abs, func(d, name string) bool {
		return d != abs || !strings.HasPrefix(name, ".index.html")
	})
}

// fault runs Options.Fault at a step.
func (r *run) fault(step, what string) error {
	if r.opts.Fault == nil {
		return nil
	}
	return r.opts.Fault(step, what)
}
