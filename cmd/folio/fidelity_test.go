package main_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/folio-archive/folio/fixtures"
)

// `folio add` saves a singlefile.html that, opened with the server gone,
// shows what the reader saw: a canvas, shadow DOM and a frame, each
// screenshotted live and from the capture in the same Chromium, at most
// 1 % of pixels apart.
func TestAddSingleFileLooksLikeThePage(t *testing.T) {
	exe := exportChromium(t)
	srv := fixtureServer(t)
	dir := newCollection(t)
	ctx, stop, err := fixtures.StartShotBrowser(exe, t.TempDir(), os.Geteuid() == 0)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	var pages []fixtures.FidelityPage
	for _, p := range fixtures.FidelityPages {
		switch p.Name() {
		case "canvas", "shadow-script", "frame-same":
			pages = append(pages, p)
		}
	}
	args := []string{"add", "-D", dir, "--plugins", "singlefile"}
	live := map[string][]byte{}
	for _, p := range pages {
		shot, err := fixtures.ShootURL(ctx, p.URL(srv.URL), p, true)
		if err != nil {
			t.Fatal(err)
		}
		live[p.Path] = shot
		args = append(args, p.URL(srv.URL))
	}
	if stdout, stderr, code := runFolio(t, args...); code != 0 {
		t.Fatalf("add exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	srv.Close() // the captures are shown with no server to ask
	snaps := snapshots(t, dir)
	for _, p := range pages {
		s := byURL(snaps, p.URL(srv.URL))
		if len(s) != 1 {
			t.Fatalf("%s: %d snapshots", p.Path, len(s))
		}
		offline, err := fixtures.ShootURL(ctx, "file://"+filepath.Join(s[0].dir, "singlefile/singlefile.html"), p, false)
		if err != nil {
			t.Fatal(err)
		}
		diff, err := fixtures.PixelDiff(live[p.Path], offline)
		if err != nil {
			t.Fatal(err)
		}
		if diff > 0.01 {
			t.Errorf("%s: singlefile.html offline differs from the live page in %.2f%% of pixels (at most 1%%)", p.Class, diff*100)
		}
	}
}
