package migrate

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/folio-archive/folio/archive"
)

func TestHydrateOutputs(t *testing.T) {
	tree := []treeEntry{
		{rel: "", mode: os.ModeDir},
		{rel: "screenshot.png", mode: 0o644, size: 10}, // legacy root output: nobody's
		{rel: "singlefile", mode: os.ModeDir},
		{rel: "singlefile/singlefile.html", mode: 0o644, size: 300},
		{rel: "singlefile/stdout.log", mode: 0o644, size: 5},
		{rel: "singlefile/hook.pid", mode: 0o644, size: 2},
		{rel: "singlefile/.x.html" + archive.TempMarker + "1-1", mode: 0o644, size: 7},
		{rel: "singlefile/assets", mode: os.ModeDir},
		{rel: "singlefile/assets/a.png", mode: 0o644, size: 100},
		{rel: "singlefile/assets/b.png", mode: 0o644, size: 250},
		{rel: "singlefile/link", mode: os.ModeSymlink, target: "singlefile.html"},
		{rel: "title", mode: os.ModeDir},
		{rel: "title/title.txt", mode: 0o644, size: 4},
		{rel: "media", mode: os.ModeDir},
		{rel: "media/clip.mp4.gz", mode: 0o644, size: 9},
	}
	listed := []archive.OutputFile{{Path: "kept.png", Size: 1, Mimetype: "image/png", Extension: "png"}}
	in := []archive.Result{
		{Plugin: "singlefile", Status: "succeeded"},
		{Plugin: "title", Status: "succeeded"},
		{Plugin: "screenshot", Status: "succeeded", OutputStr: "screenshot.png"},
		{Plugin: "media", Status: "failed"},
		{Plugin: "dom", Status: "succeeded", OutputFiles: listed},
		{Plugin: "../singlefile"},
	}
	orig := append([]archive.Result(nil), in...)
	got := hydrateOutputs(in, tree)
	if !reflect.DeepEqual(in, orig) {
		t.Fatal("hydrateOutputs modified its argument")
	}
	want := []archive.OutputFile{
		{Path: "assets/a.png", Size: 100, Mimetype: "image/png", Extension: "png"},
		{Path: "assets/b.png", Size: 250, Mimetype: "image/png", Extension: "png"},
		{Path: "singlefile.html", Size: 300, Mimetype: "text/html", Extension: "html"},
	}
	if sf := got[0]; !reflect.DeepEqual(sf.OutputFiles, want) || sf.OutputSize != 650 || sf.OutputMimetypes != "image/png,text/html" || sf.Status != "succeeded" {
		t.Errorf("singlefile = %+v", sf)
	}
	if got[1].OutputFiles != nil || got[2].OutputFiles != nil || got[5].OutputFiles != nil {
		t.Errorf("title, root-level or escaping results got files: %+v", got)
	}
	if m := got[3]; len(m.OutputFiles) != 1 || m.OutputFiles[0].Mimetype != "video/mp4" || m.Status != "failed" {
		t.Errorf("media = %+v", m)
	}
	if !reflect.DeepEqual(got[4].OutputFiles, listed) {
		t.Errorf("listed files replaced: %+v", got[4].OutputFiles)
	}
}

// A migrated 0.8 folder whose results list no files gets them from its
// plugin folders (formats spec §3.6 step 7; upstream's test expects
// "singlefile.html" in the singlefile result), the status unchanged, and
// a second run changes nothing.
func TestRunHydratesOutputFiles(t *testing.T) {
	for _, copyPath := range []bool{false, true} {
		dir := t.TempDir()
		_, err := archive.Init(dir, false)
		must(t, err)
		src := filepath.Join(dir, "archive/1700000000")
		w := func(rel, data string) {
			p := filepath.Join(src, rel)
			must(t, os.MkdirAll(filepath.Dir(p), 0o755))
			must(t, os.WriteFile(p, []byte(data), 0o644))
		}
		w("index.json", `{"url": "https://example.com/a", "timestamp": "1700000000", "title": "A", "archive_results": [`+
			`{"plugin": "singlefile", "status": "succeeded", "output": "singlefile/singlefile.html", "start_ts": "2023-11-14T22:13:20+00:00", "end_ts": "2023-11-14T22:13:21+00:00"}, `+
			`{"plugin": "title", "status": "succeeded", "output": "A", "start_ts": "2023-11-14T22:13:20+00:00", "end_ts": "2023-11-14T22:13:21+00:00"}]}`)
		w("singlefile/singlefile.html", "<html>saved page</html>")
		w("singlefile/stderr.log", "noise")
		w("title/title.txt", "A")
		c, err := archive.Open(dir)
		must(t, err)
		o := runOpts(testIDs())
		o.ForceCopy = copyPath
		_, err = Run(context.Background(), c, o)
		must(t, err)
		dst := findSnapshot(t, dir, "1700000000")
		_, results, _ := readIndexFile(t, filepath.Join(dir, dst, "index.jsonl"))
		var sf, title map[string]any
		for _, r := range results {
			switch r["plugin"] {
			case "singlefile":
				sf = r
			case "title":
				title = r
			}
		}
		files, _ := sf["output_files"].(map[string]any)
		html, _ := files["singlefile.html"].(map[string]any)
		if len(files) != 1 || html["size"] != float64(len("<html>saved page</html>")) || html["mimetype"] != "text/html" ||
			sf["output_size"] != float64(len("<html>saved page</html>")) || sf["status"] != "succeeded" {
			t.Errorf("copy=%v: singlefile result = %v", copyPath, sf)
		}
		if title == nil || title["output_files"] != nil {
			t.Errorf("copy=%v: title result = %v", copyPath, title)
		}
		before := treeState(t, dir)
		st, err := Run(context.Background(), c, runOpts(testIDs()))
		must(t, err)
		if d := diffTrees(before, treeState(t, dir)); d != "" || st.Work() != 0 {
			t.Errorf("copy=%v: second run changed the tree (work %d):\n%s", copyPath, st.Work(), d)
		}
	}
}

func TestHeadFSVersion(t *testing.T) {
	dir := t.TempDir()
	snap := func(version, notes string) string {
		return `{"type": "Snapshot", "id": "0190aaaa000070008000000000000001", "url": "https://example.com/", "timestamp": "1400000000", "fs_version": "` + version + `", "notes": "` + notes + `"}` + "\n"
	}
	result := `{"type": "ArchiveResult", "plugin": "dom", "status": "succeeded", "output_str": "` + strings.Repeat("r", 3000) + `"}` + "\n"
	for name, tc := range map[string]struct {
		data    string
		version string
		ok      bool
	}{
		"first line":                {snap("0.9.2", "") + strings.Repeat(result, 20), "0.9.2", true},
		"after a foreign line":      {`{"type": "Process", "id": "incomplete"}` + "\n" + snap("0.9.1", ""), "0.9.1", true},
		"record beyond the head":    {strings.Repeat(`{"type": "Process"}`+"\n", headBytes/10) + snap("0.9.3", ""), "0.9.3", true},
		"record longer than a head": {snap("0.9.0", strings.Repeat("n", 2*headBytes)) + result, "0.9.0", true},
		"no snapshot":               {strings.Repeat(result, 10), "", false},
		"empty":                     {"", "", false},
		"bare url line first":       {"https://example.com/\n" + snap("0.9.1", ""), "", true},
		"comment and bad line":      {"# note\nnot json\n" + snap("0.9.2", ""), "0.9.2", true},
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		must(t, os.WriteFile(p, []byte(tc.data), 0o644))
		v, ok := headFSVersion(p)
		if ok != tc.ok || v != tc.version {
			t.Errorf("%s: got %q, %v; want %q, %v", name, v, ok, tc.version, tc.ok)
		}
	}
	if _, ok := headFSVersion(filepath.Join(dir, "missing")); ok {
		t.Error("a missing file gave a record")
	}
}
