package main_test

import (
	"bytes"
	"image"
	_ "image/png"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/layout"
)

// checkDemoArchive asserts that the demo collection at dir looks like a
// real archive: every snapshot sits in the domain folder of its URL's
// host, and every screenshot is an image that decodes and shows
// something (not one flat colour).
func checkDemoArchive(t *testing.T, dir string) {
	t.Helper()
	indexes, _ := filepath.Glob(filepath.Join(dir, "archive/users/*/snapshots/*/*/*/index.jsonl"))
	if len(indexes) < 50 {
		t.Fatalf("the demo has %d snapshots in the current layout", len(indexes))
	}
	shots := 0
	for _, ix := range indexes {
		snapDir := filepath.Dir(ix)
		rel, _ := filepath.Rel(dir, snapDir)
		index, _, err := archive.ReadIndex(snapDir)
		if err != nil {
			t.Fatal(err)
		}
		snap, ok := index.Snapshot()
		if !ok {
			t.Errorf("%s: no Snapshot record", rel)
			continue
		}
		folder := filepath.Base(filepath.Dir(snapDir))
		u, err := url.Parse(snap.URL)
		if err != nil {
			t.Errorf("%s: URL %q: %v", rel, snap.URL, err)
			continue
		}
		if want := layout.Domain(snap.URL); folder != want || !strings.HasPrefix(folder, strings.ToLower(u.Hostname())) {
			t.Errorf("%s: %s sits in the domain folder %q, its host is %q", rel, snap.URL, folder, u.Host)
		}
		for _, name := range []string{"screenshot/screenshot.png", "screenshot.png"} {
			data, err := os.ReadFile(filepath.Join(snapDir, name))
			if err != nil {
				continue
			}
			shots++
			if why := blankImage(data); why != "" {
				t.Errorf("%s/%s: %s", rel, name, why)
			}
		}
	}
	if shots < len(indexes)/2 {
		t.Errorf("%d screenshots in %d snapshots", shots, len(indexes))
	}
}

// blankImage says why data is not an image that shows something, or "".
func blankImage(data []byte) string {
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return "does not decode: " + err.Error()
	}
	b := img.Bounds()
	if b.Dx() < 64 || b.Dy() < 48 {
		return "too small to preview: " + b.String()
	}
	colours := map[[4]uint32]int{}
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, a := img.At(x, y).RGBA()
			colours[[4]uint32{r, g, bl, a}]++
		}
	}
	if len(colours) < 3 {
		return "one flat colour"
	}
	return ""
}
