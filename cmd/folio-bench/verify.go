package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/folio-archive/folio/gen"
)

func init() {
	suites = append(suites, Suite{
		Name: "verify",
		Doc:  "folio verify: re-hashing every captured file against hashes.json, in MB/s beside sha256sum of the same files",
		Run:  runVerify,
	})
}

// runVerify measures verify's goal: its throughput over a tree whose
// snapshots all carry output files and a hashes.json, beside sha256sum of
// the same files (xargs -P with one sha256sum per CPU), page cache warm
// for both. verify's time includes everything else it does: reading the
// catalog, parsing each index, listing each folder and its parent.
func runVerify(b *B) error {
	c, err := b.Current("files", gen.Options{N: b.N, Seed: b.Seed, Text: true})
	if err != nil {
		return err
	}
	n := count(b.N)
	write, err := b.Run(b.FolioCmd(c.Dir, "verify", "--write-hashes", "-q"))
	if err != nil {
		b.Fail("verify --write-hashes "+n, err)
		return nil
	}
	paths, total, err := hashedFiles(c.Dir)
	if err != nil {
		return err
	}
	b.Logf("%d files, %.0f MB to hash; hashes.json written in %s", len(paths), float64(total)/1e6, write.Wall.Round(1e7))
	shaCmd := func() *exec.Cmd {
		var list bytes.Buffer
		for _, p := range paths {
			list.WriteString(p)
			list.WriteByte(0)
		}
		cmd := exec.CommandContext(b.Ctx, "xargs", "-0", "-P", fmt.Sprint(runtime.NumCPU()), "-n", "1000", "sha256sum")
		cmd.Stdin = &list
		return cmd
	}
	if _, err := b.Run(b.CatCmd(paths)); err != nil { // warm the page cache
		return err
	}
	sha, err := b.Repeat(nil, shaCmd)
	if err != nil {
		return err
	}
	v, err := b.Repeat(nil, func() *exec.Cmd { return b.FolioCmd(c.Dir, "verify", "-q") })
	b.Add(Row{Work: fmt.Sprintf("verify %s (%d files, %.0f MB)", n, len(paths), float64(total)/1e6), Unit: BytesPerSecond,
		Value: float64(total) / v.Wall.Seconds(), Baseline: float64(total) / sha.Wall.Seconds(),
		BaselineName: fmt.Sprintf("sha256sum, %d at once", runtime.NumCPU()), Goal: Goal{MinRatio: 0.9}, Err: err,
		Note: fmt.Sprintf("verify %s wall, cpu %s; sha256sum %s", format(Seconds, v.Wall.Seconds()), format(Seconds, v.CPU.Seconds()), format(Seconds, sha.Wall.Seconds()))})
	b.Add(Row{Work: fmt.Sprintf("verify %s: peak RSS", n), Unit: Bytes, Value: float64(v.MaxRSS), Goal: Goal{Max: 150e6}, Err: err})
	return nil
}

// hashedFiles lists the files verify hashes below dir: every regular file
// of the snapshot folders but their root index files and hashes/.
func hashedFiles(dir string) ([]string, int64, error) {
	var out []string
	var total int64
	err := filepath.WalkDir(filepath.Join(dir, "archive"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "hashes" {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		switch d.Name() {
		case "index.jsonl", "index.json", "index.html":
			if _, err := os.Stat(filepath.Join(filepath.Dir(p), "index.jsonl")); err == nil {
				return nil // a snapshot folder's own index
			}
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, p)
		total += info.Size()
		return nil
	})
	return out, total, err
}
