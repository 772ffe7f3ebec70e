package main_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/gen"
)

// verifyCollection generates n snapshots with their payload files and
// gives each a hashes.json through verify --write-hashes.
func verifyCollection(t *testing.T, n int) (string, *gen.Manifest) {
	t.Helper()
	dir := t.TempDir()
	m, err := gen.Current(dir, gen.Options{N: n, Seed: 7, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	r := catRun(t, dir, "verify", "--write-hashes").want(t, 0)
	if !strings.Contains(r.stderr, "hashes.json written  "+strconv.Itoa(n)) {
		t.Fatalf("first verify --write-hashes: %s", r.stderr)
	}
	catRun(t, dir, "verify").want(t, 0)
	return dir, m
}

// payloadFile returns a file of the snapshot folder rel other than its
// indexes and hashes.
func payloadFile(t *testing.T, dir, rel string, skip int) string {
	t.Helper()
	var found []string
	filepath.WalkDir(filepath.Join(dir, rel), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && !strings.HasPrefix(d.Name(), "index.") && filepath.Base(filepath.Dir(p)) != "hashes" {
			r, _ := filepath.Rel(dir, p)
			found = append(found, filepath.ToSlash(r))
		}
		return nil
	})
	if len(found) <= skip {
		t.Fatalf("%s holds %d payload files", rel, len(found))
	}
	return found[skip]
}

// problems parses verify --jsonl output into kind -> paths.
func problems(t *testing.T, out string) map[string][]string {
	t.Helper()
	got := map[string][]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var p struct{ Kind, Path, Detail string }
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatalf("verify --jsonl line %q: %v", sc.Text(), err)
		}
		got[p.Kind] = append(got[p.Kind], p.Path)
	}
	return got
}

func TestVerifyReportsEachDamageWithItsPath(t *testing.T) {
	dir, m := verifyCollection(t, 8)

	flipped := payloadFile(t, dir, m.Snapshots[0].Dir, 0)
	data, err := os.ReadFile(filepath.Join(dir, flipped))
	if err != nil || len(data) == 0 {
		t.Fatalf("read %s: %v", flipped, err)
	}
	data[len(data)/2] ^= 0x01 // same size, one bit different
	if err := os.WriteFile(filepath.Join(dir, flipped), data, 0o644); err != nil {
		t.Fatal(err)
	}
	deleted := payloadFile(t, dir, m.Snapshots[1].Dir, 0)
	if err := os.Remove(filepath.Join(dir, deleted)); err != nil {
		t.Fatal(err)
	}
	added := m.Snapshots[2].Dir + "/notes/added by hand.txt"
	os.MkdirAll(filepath.Join(dir, filepath.Dir(added)), 0o755)
	if err := os.WriteFile(filepath.Join(dir, added), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A file of another size is reported with its size, whether it grew
	// or shrank: verify reads one byte past the size hashes.json gives
	// and stats the file only when the bytes are not that many.
	grown := payloadFile(t, dir, m.Snapshots[4].Dir, 0)
	grownSize := appendTo(t, filepath.Join(dir, grown), "more")
	shrunk := payloadFile(t, dir, m.Snapshots[6].Dir, 0)
	sst, err := os.Stat(filepath.Join(dir, shrunk))
	if err != nil || sst.Size() < 2 {
		t.Fatalf("stat %s: %v", shrunk, err)
	}
	if err := os.Truncate(filepath.Join(dir, shrunk), sst.Size()-1); err != nil {
		t.Fatal(err)
	}
	truncated := m.Snapshots[3].Dir + "/index.jsonl"
	st, err := os.Stat(filepath.Join(dir, truncated))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(dir, truncated), st.Size()-7); err != nil {
		t.Fatal(err)
	}

	// Human lines on stdout, one per problem, naming the path.
	r := catRun(t, dir, "verify").want(t, 3)
	for _, want := range []string{
		"changed    " + flipped + ": sha256 ",
		"missing    " + deleted + ": listed in hashes/hashes.json",
		"extra      " + added + ": not listed in hashes/hashes.json (5 B)",
		"index      " + truncated + ": line ",
		"catalog    " + truncated + ": changed since the catalog read it (run 'folio reindex')",
		"changed    " + grown + ": size " + strconv.FormatInt(grownSize, 10) + ", hashes/hashes.json says " + strconv.FormatInt(grownSize-4, 10),
		"changed    " + shrunk + ": size " + strconv.FormatInt(sst.Size()-1, 10) + ", hashes/hashes.json says " + strconv.FormatInt(sst.Size(), 10),
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if n := strings.Count(r.stdout, "\n"); n != 7 {
		t.Errorf("%d problem lines, want 7:\n%s", n, r.stdout)
	}
	for _, want := range []string{"verified 8 snapshot folders", "problems               7", "  changed              3", "  index                1"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("summary lacks %q:\n%s", want, r.stderr)
		}
	}
	if last := lastLine(r.stderr); last != "folio: verify found 7 problems: some items failed" {
		t.Errorf("last line %q", last)
	}

	// --jsonl names the same paths; a selection checks only its snapshots.
	got := problems(t, catRun(t, dir, "verify", "--jsonl").want(t, 3).stdout)
	if !slices.Contains(got["changed"], flipped) || got["missing"][0] != deleted || got["extra"][0] != added || got["index"][0] != truncated {
		t.Errorf("--jsonl: %v", got)
	}
	r = catRun(t, dir, "verify", "-f", "exact", m.Snapshots[5].URL).want(t, 0)
	if r.stdout != "" || !strings.Contains(r.stderr, "verified 1 snapshot folders") {
		t.Errorf("a sound snapshot: %q %q", r.stdout, r.stderr)
	}
	catRun(t, dir, "verify", "-f", "exact", m.Snapshots[0].URL).want(t, 3)

	// verify changed nothing: the same problems again.
	if again := problems(t, catRun(t, dir, "verify", "--jsonl").want(t, 3).stdout); len(again) != len(got) {
		t.Errorf("second run %v, first %v", again, got)
	}
}

// appendTo appends text to the file at path and returns its new size.
func appendTo(t *testing.T, path, text string) int64 {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func TestVerifyChecksTheCatalogAndLeftovers(t *testing.T) {
	dir, m := catCollection(t, 6)
	r := catRun(t, dir, "verify").want(t, 0)
	if !strings.Contains(r.stderr, "legacy to migrate    1 ('folio update' moves them)") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	// A migration's copy of the legacy folder exists, so it was left behind.
	moved := addTitled(t, dir, "Legacy page")
	ix, _, err := archive.ReadIndex(filepath.Join(dir, moved))
	if err != nil {
		t.Fatal(err)
	}
	s, _ := ix.Snapshot()
	s.URL, s.Timestamp = "https://legacy.example.com/page1", "1609459200.123456"
	ix.SetSnapshot(s)
	if err := archive.WriteIndex(filepath.Join(dir, moved), ix); err != nil {
		t.Fatal(err)
	}
	catRun(t, dir, "reindex").want(t, 0)

	if err := os.RemoveAll(filepath.Join(dir, m.Snapshots[1].Dir)); err != nil {
		t.Fatal(err)
	}
	gone := m.Snapshots[1].Dir
	parent, id := filepath.Dir(m.Snapshots[2].Dir), filepath.Base(m.Snapshots[2].Dir)
	staging := parent + "/." + id + archive.TempMarker + "0011"
	if err := os.MkdirAll(filepath.Join(dir, staging, "screenshot"), 0o755); err != nil {
		t.Fatal(err)
	}
	temp := m.Snapshots[3].Dir + "/." + "title.txt" + archive.TempMarker + "ab12"
	if err := os.WriteFile(filepath.Join(dir, temp), []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A snapshot folder copied in by hand, not indexed yet.
	at := time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)
	copied := archive.Snapshot{ID: "0190f3c2a1b27c3d8e4f5a6b7c8d0000", URL: "https://copied.example.net/",
		BookmarkedAt: at, CreatedAt: at, Timestamp: "1717200000.0", Status: "sealed"}
	ix, _ = archive.ParseIndex(nil)
	ix.SetSnapshot(copied)
	copiedDir := filepath.Join(dir, "archive/users/system/snapshots/20240601/copied.example.net", copied.ID)
	if err := os.MkdirAll(copiedDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := archive.WriteIndex(copiedDir, ix); err != nil {
		t.Fatal(err)
	}

	r = catRun(t, dir, "verify")
	got := problems(t, catRun(t, dir, "verify", "--jsonl").want(t, 3).stdout)
	want := map[string][]string{
		"catalog": {"archive", gone},
		"staging": {staging},
		"temp":    {temp},
		"legacy":  {"archive/1609459200.123456"},
	}
	for kind, paths := range want {
		if strings.Join(got[kind], " ") != strings.Join(paths, " ") {
			t.Errorf("%s: got %v, want %v\nstdout:\n%s", kind, got[kind], paths, r.stdout)
		}
	}
	for _, line := range []string{
		"catalog    archive: 1 snapshot folder on disk is not in the catalog (run 'folio reindex')",
		"catalog    " + gone + ": the catalog lists this snapshot but its folder is gone (run 'folio reindex')",
		"legacy     archive/1609459200.123456: already migrated to " + moved + "; this copy was left behind",
		"staging    " + staging + ": staging folder of a copy of " + id + " that never finished; the copy's source was not deleted",
	} {
		if !strings.Contains(r.stdout, line+"\n") {
			t.Errorf("stdout lacks %q:\n%s", line, r.stdout)
		}
	}
	// Selected alone, the legacy folder is still known to be left behind.
	r = catRun(t, dir, "verify", "-f", "timestamp", "1609459200.123456").want(t, 3)
	if want := "legacy     archive/1609459200.123456: already migrated to " + moved + "; this copy was left behind\n"; r.stdout != want {
		t.Errorf("verify of the legacy folder alone:\n%s", r.stdout)
	}
}

func TestVerifyWritesHashesArchiveBoxReads(t *testing.T) {
	dir, m := verifyCollection(t, 3)
	p := filepath.Join(dir, m.Snapshots[0].Dir, "hashes", "hashes.json")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		RootHash   string     `json:"root_hash"`
		TreeLevels [][]string `json:"tree_levels"`
		Files      []struct {
			Path string
			Hash string
			Size int64
		}
		Metadata struct {
			FileCount int `json:"file_count"`
		}
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	if len(doc.Files) == 0 || doc.Metadata.FileCount != len(doc.Files) || doc.RootHash != doc.TreeLevels[len(doc.TreeLevels)-1][0] {
		t.Errorf("hashes.json shape: %s", data)
	}
	for _, f := range doc.Files {
		if strings.HasPrefix(f.Path, "hashes/") || archive.IsTemp(f.Path) {
			t.Errorf("hashes.json lists %s", f.Path)
		}
	}
	// A second --write-hashes leaves existing manifests alone.
	before, _ := os.Stat(p)
	time.Sleep(10 * time.Millisecond)
	catRun(t, dir, "verify", "--write-hashes").want(t, 0)
	if after, _ := os.Stat(p); !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("hashes.json rewritten")
	}
	// A manifest edited by hand contradicts its own root hash.
	files := strings.Index(string(data), `"files"`)
	edited := string(data[:files]) + strings.Replace(string(data[files:]), doc.Files[0].Hash, strings.Repeat("a", 64), 1)
	if err := os.WriteFile(p, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	r := catRun(t, dir, "verify").want(t, 3)
	if !strings.Contains(r.stdout, "hashes     "+m.Snapshots[0].Dir+"/hashes/hashes.json: root_hash ") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	// A manifest cut short is named, not a crash.
	if err := os.WriteFile(p, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	r = catRun(t, dir, "verify").want(t, 3)
	if !strings.Contains(r.stdout, "hashes/hashes.json: not a JSON object: it ends early") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
}

func TestVerifyUsage(t *testing.T) {
	dir, _ := catCollection(t, 2)
	r := catRun(t, dir, "verify", "--parallel", "-1").want(t, 2)
	if firstLine(r.stderr) != "folio: --parallel -1: must not be negative" {
		t.Errorf("stderr %q", r.stderr)
	}
	r = catRun(t, dir, "verify", "--status", "done").want(t, 2)
	if !strings.Contains(r.stderr, "\nfolio: --status \"done\": unknown (want one of queued, started, paused, backoff, sealed, archived, partial, failed)\n") {
		t.Errorf("stderr %q", r.stderr)
	}
}

// TestVerifyReportsSiteTemps: a temp file a killed export left in site/
// or at the root is reported, as those in snapshot folders are.
func TestVerifyReportsSiteTemps(t *testing.T) {
	dir, _ := catCollection(t, 5)
	catRun(t, dir, "export").want(t, 0)
	catRun(t, dir, "verify").want(t, 0)
	for _, p := range []string{"site/.folio.js" + archive.TempMarker + "0a1b", ".index.jsonl" + archive.TempMarker + "2c3d", "site/search/.1.js" + archive.TempMarker + "4e5f"} {
		if err := os.WriteFile(filepath.Join(dir, p), []byte("half"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := catRun(t, dir, "verify").want(t, 3)
	for _, p := range []string{"site/.folio.js" + archive.TempMarker + "0a1b", ".index.jsonl" + archive.TempMarker + "2c3d", "site/search/.1.js" + archive.TempMarker + "4e5f"} {
		if !strings.Contains(r.stdout, "temp       "+p+": temp file of a write that never finished") {
			t.Errorf("%s is not reported:\n%s", p, r.stdout)
		}
	}
	// The next export removes them.
	catRun(t, dir, "export").want(t, 0)
	catRun(t, dir, "verify").want(t, 0)
}

// TestVerifyHashesFilesOfManyReads checks files that take more than one
// read, one of them exactly as long as verify's read buffer (so that
// the last read of its bytes is a full one and only the next finds the
// end), and finds a change at each one's end: a byte flipped, or one
// more byte.
func TestVerifyHashesFilesOfManyReads(t *testing.T) {
	dir, m := verifyCollection(t, 2)
	snap := m.Snapshots[1]
	var names []string
	for i, size := range []int{256 << 10, 256<<10 + 5, 600 << 10} {
		name := snap.Dir + "/media/big" + strconv.Itoa(i) + ".bin"
		data := make([]byte, size)
		for j := range data {
			data[j] = byte(j * (i + 3))
		}
		os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	if err := os.Remove(filepath.Join(dir, snap.Dir, "hashes", "hashes.json")); err != nil {
		t.Fatal(err)
	}
	catRun(t, dir, "verify", "--write-hashes", "-f", "exact", snap.URL).want(t, 0)
	catRun(t, dir, "verify").want(t, 0)
	// The file of one buffer grows by a byte: its bytes fill the first
	// read, and only the second finds there is more.
	appendTo(t, filepath.Join(dir, names[0]), "x")
	for _, name := range names[1:] {
		p := filepath.Join(dir, name)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		data[len(data)-1] ^= 0x80
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := problems(t, catRun(t, dir, "verify", "--jsonl").want(t, 3).stdout)
	if slices.Sort(got["changed"]); !slices.Equal(got["changed"], names) || len(got) != 1 {
		t.Errorf("problems %v, want %v changed", got, names)
	}
}

// TestVerifyTrustsFoldersUnchangedSinceTheirHashes: a folder whose change
// time is before hashes.json's mtime is checked from hashes.json's list
// instead of a listing, each of its files still opened and hashed; a
// folder changed since is listed, at any depth; a listed file replaced by
// a symlink is not followed; an mtime in the future trusts nothing.
func TestVerifyTrustsFoldersUnchangedSinceTheirHashes(t *testing.T) {
	dir, m := verifyCollection(t, 8)
	var snap, nested string // a file two folders deep: wget/<domain>/index.html
	for _, s := range m.Snapshots {
		for skip := 0; nested == ""; skip++ {
			var found []string
			filepath.WalkDir(filepath.Join(dir, s.Dir), func(p string, d os.DirEntry, err error) error {
				if err == nil && d.Type().IsRegular() {
					r, _ := filepath.Rel(filepath.Join(dir, s.Dir), p)
					found = append(found, filepath.ToSlash(r))
				}
				return nil
			})
			if skip >= len(found) {
				break
			}
			if f := found[skip]; strings.Count(f, "/") == 2 && !strings.HasPrefix(f, "hashes/") {
				snap, nested = s.Dir, f
			}
		}
		if nested != "" {
			break
		}
	}
	if nested == "" {
		t.Fatal("no snapshot holds a file two folders deep")
	}
	hashes := filepath.Join(dir, snap, "hashes", "hashes.json")
	top, _, _ := strings.Cut(nested, "/")
	extraTop := snap + "/" + top + "/extra.txt"
	extraDeep := snap + "/" + path.Dir(nested) + "/extra.txt"
	extras := []string{extraDeep, extraTop} // sorted
	for _, f := range extras {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("hello"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Their folders changed after hashes.json was written: listed.
	got := problems(t, catRun(t, dir, "verify", "--jsonl").want(t, 3).stdout)
	if slices.Sort(got["extra"]); !slices.Equal(got["extra"], extras) || len(got) != 1 {
		t.Errorf("extras in changed folders: %v", got)
	}

	// A file changed in place does not touch its folder, and is found in
	// a folder taken from hashes.json; a file replaced by a symlink to a
	// copy of itself outside the collection is not followed.
	changed := snap + "/" + nested
	appendTo(t, filepath.Join(dir, changed), "more")
	linked := payloadFile(t, dir, snap, 0)
	if strings.HasPrefix(linked, snap+"/"+top+"/") {
		linked = payloadFile(t, dir, snap, 1)
	}
	data, err := os.ReadFile(filepath.Join(dir, linked))
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "copy")
	if err := os.WriteFile(outside, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, linked)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, linked)); err != nil {
		t.Fatal(err)
	}
	// Hashes taken after all of it (hashes.json's mtime and the time it
	// records, a second past: the slack verify allows the filesystem's
	// clock): every folder is unchanged since, taken from its list; the
	// extras, not in it, are not seen (the one thing a folder not listed
	// cannot show).
	taken := func(at time.Time) {
		t.Helper()
		doc, err := os.ReadFile(hashes)
		if err != nil {
			t.Fatal(err)
		}
		re := regexp.MustCompile(`"timestamp": "[^"]*"`)
		if !re.Match(doc) {
			t.Fatalf("%s records no time", hashes)
		}
		doc = re.ReplaceAll(doc, []byte(`"timestamp": "`+at.UTC().Format("2006-01-02T15:04:05.000000-07:00")+`"`))
		// A hashes/ folder born now: ArchiveBox makes it before its walk.
		if err := os.RemoveAll(filepath.Dir(hashes)); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Dir(hashes), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(hashes, doc, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(hashes, at, at); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(1100 * time.Millisecond)
	now := time.Now()
	// hashes.json's mtime alone moved on (a copy that does not keep
	// times): the hashes it records are older than the folders' changes,
	// which are listed.
	if err := os.Chtimes(hashes, now, now); err != nil {
		t.Fatal(err)
	}
	got = problems(t, catRun(t, dir, "verify", "--jsonl").want(t, 3).stdout)
	if slices.Sort(got["extra"]); !slices.Equal(got["extra"], extras) || len(got) != 3 {
		t.Errorf("hashes.json's mtime later than the hashes: %v", got)
	}
	taken(now)
	got = problems(t, catRun(t, dir, "verify", "--jsonl").want(t, 3).stdout)
	if len(got) != 2 || !slices.Equal(got["changed"], []string{changed}) || !slices.Equal(got["missing"], []string{linked}) {
		t.Errorf("folders taken from hashes.json: %v, want %s changed and %s missing", got, changed, linked)
	}

	// Hashes of a time to come (a clock set forward) trust nothing:
	// every folder is listed again.
	taken(now.Add(time.Hour))
	got = problems(t, catRun(t, dir, "verify", "--jsonl").want(t, 3).stdout)
	if slices.Sort(got["extra"]); !slices.Equal(got["extra"], extras) ||
		!slices.Equal(got["changed"], []string{changed}) || !slices.Equal(got["missing"], []string{linked}) {
		t.Errorf("hashes from the future: %v", got)
	}
}
