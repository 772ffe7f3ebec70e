package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=..." (make
// build stamps git describe); else it comes from the build info: the
// module version of a `go install …@version`, or the VCS revision.
var version = "dev"

func init() { commands = append(commands, newVersionCmd) }

func newVersionCmd(e *env) *cobra.Command {
	var short bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print folio's version, Go version, Chromium and data directory",
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := buildVersion()
			if short || e.quiet { // as ArchiveBox's version -q
				fmt.Fprintln(e.stdout, v)
				return nil
			}
			chromium := "not found"
			if p, err := findChromium(); err == nil {
				chromium = p
			}
			dir, _ := filepath.Abs(e.dir())
			fmt.Fprintf(e.stdout, "folio %s\ngo %s %s/%s\nchromium %s\ndata dir %s\n", v, runtime.Version(), runtime.GOOS, runtime.GOARCH, chromium, dir)
			return nil
		},
	}
	cmd.Flags().BoolVar(&short, "short", false, "print only the version (as -q does)")
	return cmd
}

// buildVersion is the version folio was built as.
func buildVersion() string {
	info, ok := debug.ReadBuildInfo()
	if version != "dev" || !ok {
		return version
	}
	if m := info.Main.Version; m != "" && m != "(devel)" {
		return m
	}
	v, dirty := "dev", false
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision" && len(s.Value) >= 12:
			v = "dev-" + s.Value[:12]
		case s.Key == "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty && v != "dev" {
		v += "-dirty"
	}
	return v
}

// findChromium looks for the browser folio captures with.
func findChromium() (string, error) {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}
