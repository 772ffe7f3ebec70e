package migrate

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/folio-archive/folio/archive"
)

// snapshotTree describes every entry under root: kind, mode, mtime (for
// files and symlinks), content hash or link text. Two trees with the same
// description hold the same data.
func snapshotTree(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			tgt, _ := os.Readlink(p)
			out[rel] = fmt.Sprintf("link %s mtime=%d", tgt, fi.ModTime().UnixNano())
		case fi.IsDir():
			out[rel] = fmt.Sprintf("dir %v", fi.Mode().Perm())
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			out[rel] = fmt.Sprintf("file %v %s mtime=%d", fi.Mode().Perm(), hex.EncodeToString(sum[:]), fi.ModTime().UnixNano())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func diffTrees(a, b map[string]string) string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var d []string
	for _, k := range keys {
		if a[k] != b[k] {
			d = append(d, fmt.Sprintf("%s: %q != %q", k, a[k], b[k]))
		}
	}
	return strings.Join(d, "\n")
}

// writeTree builds an awkward snapshot folder: binary payloads, unicode
// and '%' names, nested and empty dirs, relative symlinks, odd modes.
func writeTree(t testing.TB, root string) {
	t.Helper()
	files := map[string]string{
		"index.json":                       `{"url": "https://example.com/", "timestamp": "1508259732"}`,
		"screenshot.png":                   "\x00\xff\x00\xffPNG" + strings.Repeat("\x00\xff", 5000),
		"ünïcødé %41 name.html":            "<p>ü</p>",
		"example.com/index%3A.html":        "wget page",
		"example.com/deep/er/path/file.js": "x",
		"media/stderr.log":                 "",
		"big.bin":                          strings.Repeat("0123456789abcdef", 200000),
	}
	for rel, data := range files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	must(t, os.Chmod(filepath.Join(root, "example.com/deep/er/path/file.js"), 0o751))
	must(t, os.MkdirAll(filepath.Join(root, "empty/nested-empty"), 0o755))
	must(t, os.Mkdir(filepath.Join(root, "private"), 0o700))
	must(t, os.Symlink("screenshot.png", filepath.Join(root, "payload-link")))
	must(t, os.Symlink("../screenshot.png", filepath.Join(root, "media/up-link")))
	must(t, os.Symlink("does-not-exist", filepath.Join(root, "dangling")))
	old := time.Date(2017, 10, 17, 17, 2, 13, 123456789, time.UTC)
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if d.Type()&fs.ModeSymlink == 0 && !d.IsDir() {
			os.Chtimes(p, old, old)
		}
		return nil
	})
	for _, dir := range []string{"empty/nested-empty", "empty", "private", "media", "example.com/deep/er/path"} {
		os.Chtimes(filepath.Join(root, dir), old, old)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestMoveTreeRename(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "archive/1508259732"), filepath.Join(dir, "archive/users/system/snapshots/20171017/example.com/0190f3c2a1b27c3d8e4f5a6b7c8d9e0f")
	writeTree(t, src)
	want := snapshotTree(t, src)
	tree, err := walkTree(src)
	must(t, err)
	renamed, n, err := (&copier{}).moveTree(src, dst, tree, false)
	must(t, err)
	if !renamed {
		t.Fatal("same filesystem, absent destination: want a rename")
	}
	if _, size := treeBytes(tree); n != size {
		t.Errorf("moved %d bytes, tree holds %d", n, size)
	}
	if _, err := os.Lstat(src); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("source still exists: %v", err)
	}
	if d := diffTrees(want, snapshotTree(t, dst)); d != "" {
		t.Errorf("renamed tree differs:\n%s", d)
	}
}

// TestMoveTreeCopyPreservesEverything copies in the kernel
// (copy_file_range, as on one filesystem) and by read and write (as
// across filesystems on which the kernel refuses it).
func TestMoveTreeCopyPreservesEverything(t *testing.T) {
	for _, readWrite := range []bool{false, true} {
		name := "copy_file_range"
		if readWrite {
			name = "read and write"
		}
		t.Run(name, func(t *testing.T) {
			was := noCopyRange.Load()
			noCopyRange.Store(readWrite)
			t.Cleanup(func() { noCopyRange.Store(was) })
			testCopyPreservesEverything(t)
		})
	}
}

func testCopyPreservesEverything(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "a/b/dst")
	writeTree(t, src)
	want := snapshotTree(t, src)
	tree, err := walkTree(src)
	must(t, err)
	renamed, _, err := (&copier{}).moveTree(src, dst, tree, true)
	must(t, err)
	if renamed {
		t.Fatal("forced copy renamed")
	}
	// Modes, mtimes (files, symlinks, dirs), link texts, empty dirs and
	// bytes all survive the copy.
	if d := diffTrees(want, snapshotTree(t, dst)); d != "" {
		t.Errorf("copied tree differs:\n%s", d)
	}
	for _, rel := range []string{"empty", "private", "example.com/deep/er/path"} {
		a, _ := os.Stat(filepath.Join(src, rel))
		b, _ := os.Stat(filepath.Join(dst, rel))
		if !a.ModTime().Equal(b.ModTime()) {
			t.Errorf("%s: dir mtime %v, source %v", rel, b.ModTime(), a.ModTime())
		}
	}
	if _, err := verifyTree(src, dst); err != nil {
		t.Errorf("verify after copy: %v", err)
	}
	if d := diffTrees(want, snapshotTree(t, src)); d != "" {
		t.Errorf("copy changed the source:\n%s", d)
	}
	names, _ := os.ReadDir(filepath.Dir(dst))
	if len(names) != 1 {
		t.Errorf("staging left beside the destination: %v", names)
	}
}

func TestMoveTreeMerge(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	writeTree(t, src)
	// The destination already has: an identical file, an identical
	// symlink, files only it holds, and its own index.jsonl.
	must(t, os.MkdirAll(filepath.Join(dst, "media"), 0o755))
	copyOne(t, filepath.Join(src, "screenshot.png"), filepath.Join(dst, "screenshot.png"))
	must(t, os.Symlink("screenshot.png", filepath.Join(dst, "payload-link")))
	must(t, os.WriteFile(filepath.Join(dst, "existing-user-output.bin"), []byte("\x00\xffmine"), 0o600))
	must(t, os.WriteFile(filepath.Join(dst, "media/preexisting-output.bin"), []byte("kept"), 0o644))
	must(t, os.WriteFile(filepath.Join(dst, "index.jsonl"), []byte(`{"type": "Snapshot", "id": "x"}`+"\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(src, "index.jsonl"), []byte(`{"type":"Process","id":"incomplete"}`+"\n"), 0o644))
	before := snapshotTree(t, dst)
	tree, err := walkTree(src)
	must(t, err)
	_, _, err = (&copier{}).moveTree(src, dst, tree, false)
	must(t, err)
	if _, err := verifyTree(src, dst); err != nil {
		t.Fatalf("verify after merge: %v", err)
	}
	after := snapshotTree(t, dst)
	for _, rel := range []string{"existing-user-output.bin", "media/preexisting-output.bin", "index.jsonl", "payload-link"} {
		if before[rel] != after[rel] {
			t.Errorf("%s changed: %q -> %q", rel, before[rel], after[rel])
		}
	}
	for rel, v := range snapshotTree(t, src) {
		if rel == "index.jsonl" || rel == "." || before[rel] != "" {
			continue // the destination's own entries are left as they were
		}
		if after[rel] != v && !strings.HasPrefix(v, "dir") {
			t.Errorf("%s: %q, source %q", rel, after[rel], v)
		}
	}
}

func copyOne(t testing.TB, a, b string) {
	data, err := os.ReadFile(a)
	must(t, err)
	must(t, os.WriteFile(b, data, 0o644))
}

func TestMoveTreeRefusesToOverwrite(t *testing.T) {
	for name, prep := range map[string]func(dst string){
		"differing file": func(dst string) {
			os.WriteFile(filepath.Join(dst, "screenshot.png"), []byte("different"), 0o644)
		},
		"same size, other bytes": func(dst string) {
			data, _ := os.ReadFile(filepath.Join(dst, "..", "src", "big.bin"))
			data[len(data)-1] ^= 1
			os.WriteFile(filepath.Join(dst, "big.bin"), data, 0o644)
		},
		"other symlink": func(dst string) { os.Symlink("elsewhere", filepath.Join(dst, "payload-link")) },
		"file for dir":  func(dst string) { os.WriteFile(filepath.Join(dst, "media"), nil, 0o644) },
		"dir for file":  func(dst string) { os.Mkdir(filepath.Join(dst, "index.json"), 0o755) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
			writeTree(t, src)
			must(t, os.Mkdir(dst, 0o755))
			prep(dst)
			srcBefore, dstBefore := snapshotTree(t, src), snapshotTree(t, dst)
			tree, err := walkTree(src)
			must(t, err)
			_, _, err = (&copier{}).moveTree(src, dst, tree, false)
			if !errors.Is(err, ErrWouldOverwrite) {
				t.Fatalf("err = %v, want ErrWouldOverwrite", err)
			}
			if !strings.Contains(err.Error(), "would overwrite a different file: "+dst) {
				t.Errorf("message %q does not name the destination path", err)
			}
			if d := diffTrees(srcBefore, snapshotTree(t, src)); d != "" {
				t.Errorf("source changed:\n%s", d)
			}
			if d := diffTrees(dstBefore, snapshotTree(t, dst)); d != "" {
				t.Errorf("destination changed:\n%s", d)
			}
		})
	}
}

func TestWalkTreeRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	writeTree(t, src)
	must(t, syscall.Mkfifo(filepath.Join(src, "media/pipe"), 0o644))
	_, err := walkTree(src)
	if !errors.Is(err, ErrSpecialFile) || !strings.Contains(err.Error(), "media/pipe (fifo)") {
		t.Fatalf("err = %v, want ErrSpecialFile naming media/pipe (fifo)", err)
	}
}

func TestCopyWriteErrorLosesNothing(t *testing.T) {
	for _, merge := range []bool{false, true} {
		t.Run(fmt.Sprintf("merge=%v", merge), func(t *testing.T) {
			dir := t.TempDir()
			src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
			writeTree(t, src)
			if merge {
				must(t, os.Mkdir(dst, 0o755))
				must(t, os.WriteFile(filepath.Join(dst, "mine"), []byte("mine"), 0o644))
			}
			srcBefore := snapshotTree(t, src)
			var dstBefore map[string]string
			if merge {
				dstBefore = snapshotTree(t, dst)
			}
			var calls atomic.Int64
			diskFull := errors.New("no space left on device")
			c := &copier{label: "archive/1508259732", fault: func(step, source string) error {
				if step == "write" && calls.Add(1) == 4 {
					return diskFull
				}
				return nil
			}}
			tree, err := walkTree(src)
			must(t, err)
			_, _, err = c.moveTree(src, dst, tree, true)
			if !errors.Is(err, diskFull) {
				t.Fatalf("err = %v, want the write error", err)
			}
			if !strings.Contains(err.Error(), "copy "+src) {
				t.Errorf("message %q does not name the file", err)
			}
			if d := diffTrees(srcBefore, snapshotTree(t, src)); d != "" {
				t.Errorf("source changed:\n%s", d)
			}
			if merge {
				if d := diffTrees(dstBefore, snapshotTree(t, dst)); d != "" {
					t.Errorf("destination not rolled back:\n%s", d)
				}
			} else if names, _ := os.ReadDir(dir); len(names) != 1 {
				t.Errorf("staging or destination left behind: %v", names)
			}
		})
	}
}

func TestVerifyTreeFindsEveryDifference(t *testing.T) {
	for name, spoil := range map[string]func(dst string){
		"missing file":      func(dst string) { os.Remove(filepath.Join(dst, "screenshot.png")) },
		"missing empty dir": func(dst string) { os.Remove(filepath.Join(dst, "empty/nested-empty")) },
		"changed byte": func(dst string) {
			p := filepath.Join(dst, "big.bin")
			data, _ := os.ReadFile(p)
			data[1234] ^= 0x80
			os.WriteFile(p, data, 0o644)
		},
		"truncated":          func(dst string) { os.Truncate(filepath.Join(dst, "big.bin"), 10) },
		"retargeted symlink": func(dst string) { p := filepath.Join(dst, "dangling"); os.Remove(p); os.Symlink("other", p) },
		"symlink as file": func(dst string) {
			p := filepath.Join(dst, "payload-link")
			os.Remove(p)
			copyOne(t, filepath.Join(dst, "screenshot.png"), p)
		},
		"dir as symlink": func(dst string) {
			p := filepath.Join(dst, "empty")
			os.RemoveAll(p)
			os.Symlink("private", p)
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
			writeTree(t, src)
			tree, _ := walkTree(src)
			_, _, err := (&copier{}).moveTree(src, dst, tree, true)
			must(t, err)
			spoil(dst)
			if _, err := verifyTree(src, dst); !errors.Is(err, ErrMismatch) {
				t.Fatalf("verify = %v, want ErrMismatch", err)
			}
		})
	}
}

func TestRemoveTreeKeepsUnverifiedEntries(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	writeTree(t, src)
	tree, err := walkTree(src)
	must(t, err)
	// A file that appeared after the walk must not be deleted.
	must(t, os.WriteFile(filepath.Join(src, "empty/late"), []byte("late"), 0o644))
	err = removeTree(src, tree, nil, "")
	if err == nil {
		t.Fatal("removeTree deleted a folder holding an unverified file")
	}
	if _, err := os.Stat(filepath.Join(src, "empty/late")); err != nil {
		t.Errorf("late file gone: %v", err)
	}
}

func TestTempNamesAreTemp(t *testing.T) {
	if n := tempName("screenshot.png"); !archive.IsTemp(n) || !strings.HasPrefix(n, ".screenshot.png") {
		t.Errorf("tempName = %q, not recognised by archive.IsTemp", n)
	}
}

func TestSyncGroupCoversEveryCaller(t *testing.T) {
	g := newSyncGroup()
	var runs, inRun atomic.Int64
	var written atomic.Int64 // writes made before each caller asked
	var synced atomic.Int64  // highest write count a finished run covered
	var wg sync.WaitGroup
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := written.Add(1)
			err := g.do(func() error {
				if inRun.Add(1) != 1 {
					t.Error("two runs at once")
				}
				runs.Add(1)
				seen := written.Load()
				time.Sleep(time.Millisecond)
				for {
					cur := synced.Load()
					if seen <= cur || synced.CompareAndSwap(cur, seen) {
						break
					}
				}
				inRun.Add(-1)
				return nil
			})
			must(t, err)
			if synced.Load() < w {
				t.Errorf("returned before a run covered write %d", w)
			}
		}()
	}
	wg.Wait()
	if runs.Load() >= 64 {
		t.Errorf("%d runs for 64 callers: no sharing", runs.Load())
	}
}

func TestJournalRoundTripAndTornLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), "migrate.journal")
	j, recs, err := openJournal(p, 2)
	must(t, err)
	if len(recs) != 0 {
		t.Fatalf("new journal has %d records", len(recs))
	}
	must(t, j.append(jrecord{Step: stepPlanned, Src: "archive/1", Dst: "d1", Mode: modeRename, Index: []byte("\x00\xff{}\n")}, true))
	must(t, j.append(jrecord{Step: stepCopied, Src: "archive/1"}, false))
	must(t, j.append(jrecord{Step: stepPlanned, Src: "archive/2", Dst: "d2", Mode: modeCopy}, true))
	must(t, j.append(jrecord{Step: stepDeleting, Src: "archive/2"}, true))
	must(t, j.append(jrecord{Step: stepPlanned, Src: "archive/3", Dst: "d3", Mode: modeCopy}, false))
	must(t, j.append(jrecord{Step: stepDone, Src: "archive/3"}, false))
	must(t, j.close())
	f, _ := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"step":"deleted","src":"archi`) // torn by a crash
	f.Close()
	j, recs, err = openJournal(p, 2)
	must(t, err)
	defer j.close()
	pend := pendingRecords(recs)
	if len(pend) != 2 {
		t.Fatalf("pending = %+v, want archive/1 and archive/2", pend)
	}
	if pend[0].Src != "archive/1" || pend[0].Step != stepCopied || pend[0].Mode != modeRename || string(pend[0].Index) != "\x00\xff{}\n" || pend[0].Dst != "d1" {
		t.Errorf("pending[0] = %+v", pend[0])
	}
	if pend[1].Src != "archive/2" || pend[1].Step != stepDeleting || pend[1].Dst != "d2" {
		t.Errorf("pending[1] = %+v", pend[1])
	}
	must(t, j.append(jrecord{Step: stepDone, Src: "archive/1"}, true))
	data, _ := os.ReadFile(p)
	recs, _ = parseJournal(data)
	if last := recs[len(recs)-1]; last.Src != "archive/1" || last.Step != stepDone {
		t.Errorf("record after a torn line lost: %+v", last)
	}
}

func TestRecheckRefusesAChangedSource(t *testing.T) {
	for name, change := range map[string]func(src string){
		"rewritten file": func(src string) {
			p := filepath.Join(src, "screenshot.png")
			data, _ := os.ReadFile(p)
			os.WriteFile(p, data, 0o644) // same bytes, new mtime
		},
		"new file":      func(src string) { os.WriteFile(filepath.Join(src, "empty/late"), []byte("x"), 0o644) },
		"removed link":  func(src string) { os.Remove(filepath.Join(src, "payload-link")) },
		"retargeted":    func(src string) { p := filepath.Join(src, "dangling"); os.Remove(p); os.Symlink("x", p) },
		"dst file gone": func(src string) { os.Remove(filepath.Join(src, "..", "dst", "big.bin")) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
			writeTree(t, src)
			tree, _ := walkTree(src)
			_, _, err := (&copier{}).moveTree(src, dst, tree, true)
			must(t, err)
			verified, err := verifyTree(src, dst)
			must(t, err)
			if _, err := recheck(src, dst, verified, nil); err != nil {
				t.Fatalf("recheck of an unchanged tree: %v", err)
			}
			time.Sleep(10 * time.Millisecond)
			change(src)
			if _, err := recheck(src, dst, verified, nil); !errors.Is(err, ErrMismatch) {
				t.Fatalf("recheck = %v, want ErrMismatch", err)
			}
		})
	}
}
