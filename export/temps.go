package export

import (
	"path/filepath"
	"strings"

	"github.com/folio-archive/folio/archive"
)

// An export killed in mid-write leaves the temp files of its atomic
// writes: ".index.html.folio-tmp-…" in snapshot folders, and others in
// the site folders and beside the root files. The next export removes
// them, holding the collection's lock, without listing every snapshot
// folder: the few folders of the site itself are listed every run (a
// handful of readdirs), and the snapshot folders an export writes in are
// noted first in a TouchLog beside its state, so that the next export
// looks in exactly the folders the killed one had begun to write.

// touchedLog is the TouchLog of the export whose state is at statePath.
func touchedLog(statePath string) string { return statePath + ".touched" }

// exportTemp reports whether name, in a snapshot folder exported in
// place, is the temp file of the page (or its .gz) an export writes there:
// the only temp files of the export's own kind in the collection's tree.
func exportTemp(name string) bool {
	return strings.HasPrefix(name, "."+RootPage+archive.TempMarker) ||
		strings.HasPrefix(name, "."+RootPage+".gz"+archive.TempMarker)
}

// rootTemp reports whether name, at the export root, is the temp file of
// a root file the export writes.
func rootTemp(name string) bool {
	for _, f := range []string{RootPage, RootPage + ".gz", ManifestFile, ManifestFile + ".gz", HeadersFile, ".nojekyll"} {
		if strings.HasPrefix(name, "."+f+archive.TempMarker) {
			return true
		}
	}
	return false
}

// openTouched removes what earlier exports to the same place left: the
// temp files in the site's own folders, beside the root files and the
// state, and in the snapshot folders a killed export had noted. It
// returns the log this export notes its snapshot folders in.
func (s *site) openTouched() (*archive.TouchLog, error) {
	warn := func(err error) { s.p.Warnf("%v", err) }
	for _, d := range []struct {
		dir   string
		match func(string) bool
	}{
		{s.dst, rootTemp},
		{s.abs(SiteDir), nil},
		{s.abs(SiteDir + "/search"), nil},
		{s.abs(SiteDir + "/text"), nil},
		{filepath.Dir(s.statePth), func(name string) bool {
			base := "." + filepath.Base(s.statePth)
			return strings.HasPrefix(name, base+archive.TempMarker) || strings.HasPrefix(name, base+rowsSuffix+archive.TempMarker)
		}},
	} {
		if err := archive.RemoveTemps(d.dir, d.match); err != nil {
			warn(err)
		}
	}
	return archive.OpenTouchLog(touchedLog(s.statePth), s.sweepFolder, warn)
}

// sweepFolder removes the export's temp files from the snapshot folder
// dir of the export: the page's in place; in an --out copy, whose folders
// hold nothing but what the export wrote, every temp file below it.
func (s *site) sweepFolder(dir string) error {
	if s.inPlace {
		return archive.RemoveTemps(s.abs(dir), exportTemp)
	}
	return archive.RemoveTempsBelow(s.abs(dir), nil)
}

// fault runs Options.Fault at a step.
func (s *site) fault(step, what string) error {
	if s.opts.Fault == nil {
		return nil
	}
	return s.opts.Fault(step, what)
}
