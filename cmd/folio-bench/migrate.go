package main

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/folio-archive/folio/gen"
)

func init() {
	suites = append(suites, Suite{
		Name: "migrate",
		Doc:  "update --migrate-only of 10k legacy snapshots (rename), and the copy path beside cp -a",
		Run:  runMigrate,
	})
}

// runMigrate measures the migration goals of PRODUCT.md on generated 0.7
// collections (database plus legacy folders of 10 files each):
//
//   - update --migrate-only of 10k snapshots on one filesystem (every
//     folder renamed), goal ≤ 10 s, beside cp -a of the same folders;
//   - the copy path (copy, verify, index, sync, recheck, delete) across
//     two filesystems, beside cp -a of the same folders between them (see
//     migrateAcross), goal ≥ 70 % of its throughput;
//   - the same copy forced on one filesystem (FOLIO_MIGRATE_COPY=1), for
//     information.
//
// Every repetition starts from a fresh cp -a of the template, outside the
// measurement.
func runMigrate(b *B) error {
	n := min(b.N, 10000)
	tmpl, err := b.legacyTemplate(fmt.Sprintf("legacy-0.7-%s", count(n)), gen.LegacyOptions{Version: gen.Legacy07, N: n, Files: 10, Seed: b.Seed})
	if err != nil {
		return err
	}
	data := filepath.Join(b.Work, "migrate-data")
	prepare := func(from string) func() error {
		return func() error {
			if err := os.RemoveAll(data); err != nil {
				return err
			}
			if out, err := exec.CommandContext(b.Ctx, "cp", "-a", from, data).CombinedOutput(); err != nil {
				return fmt.Errorf("cp -a %s: %v %s", from, err, out)
			}
			return exec.CommandContext(b.Ctx, "sync").Run()
		}
	}
	defer os.RemoveAll(data)

	cpDst := filepath.Join(b.Work, "migrate-cp")
	// The baselines start without a destination: removing the previous
	// copy is setup, outside the measurement.
	clearDst := func() error {
		if err := os.RemoveAll(cpDst); err != nil {
			return err
		}
		return exec.CommandContext(b.Ctx, "sync").Run()
	}
	cpa := func(from string, sync bool) func() *exec.Cmd {
		return func() *exec.Cmd {
			script := `cp -a "$1" "$2"`
			if sync {
				script += " && sync"
			}
			return exec.CommandContext(b.Ctx, "sh", "-c", script, "sh", from, cpDst)
		}
	}
	defer os.RemoveAll(cpDst)

	// One filesystem: renames.
	cp, err := b.Repeat(clearDst, cpa(filepath.Join(tmpl, "archive"), false))
	if err != nil {
		return err
	}
	os.RemoveAll(cpDst)
	mig, err := b.Repeat(prepare(tmpl), func() *exec.Cmd { return b.FolioCmd(data, "update", "--migrate-only", "-q") })
	row := Row{Work: fmt.Sprintf("update --migrate-only, %s legacy snapshots", count(n)), Goal: Goal{Max: 10},
		Value: mig.Wall.Seconds(), Err: err, Baseline: cp.Wall.Seconds(), BaselineName: "cp -a of the legacy folders"}
	if err == nil {
		row.Note = fmt.Sprintf("%.0f snapshots/s", float64(n)/mig.Wall.Seconds())
	}
	b.Add(row)

	// The copy path, on larger files so it measures data as well as
	// metadata.
	cn := min(b.N, 2000)
	ctmpl, err := b.legacyTemplate(fmt.Sprintf("legacy-0.7-%s-16k", count(cn)), gen.LegacyOptions{Version: gen.Legacy07, N: cn, Files: 10, Size: 16 << 10, Seed: b.Seed})
	if err != nil {
		return err
	}
	bytes, err := treeSize(filepath.Join(ctmpl, "archive"))
	if err != nil {
		return err
	}
	work := fmt.Sprintf("migration by copy across filesystems, %s snapshots (%.0f MB)", count(cn), float64(bytes)/1e6)
	if err := b.migrateAcross(ctmpl, bytes, work); err != nil {
		b.Logf("no second filesystem (%v): the copy path is measured on one filesystem only", err)
		b.Fail(work, err)
	}

	// The same copy forced on this one filesystem, beside cp -a. Where
	// the disk is mounted with discard every freed extent is trimmed
	// before unlink returns, and deleting a source costs as much as
	// copying it: the move baseline shows that cost.
	cps, err := b.Repeat(clearDst, cpa(filepath.Join(ctmpl, "archive"), true))
	if err != nil {
		return err
	}
	os.RemoveAll(cpDst)
	copyRun, err := b.Repeat(prepare(ctmpl), func() *exec.Cmd {
		cmd := b.FolioCmd(data, "update", "--migrate-only", "-q")
		cmd.Env = append(cmd.Env, "FOLIO_MIGRATE_COPY=1")
		return cmd
	})
	setupMv := func() error {
		if err := clearDst(); err != nil {
			return err
		}
		return prepare(ctmpl)()
	}
	mv, mvErr := b.Repeat(setupMv, func() *exec.Cmd {
		return exec.CommandContext(b.Ctx, "sh", "-c", `cp -a "$1" "$2" && sync && rm -rf "$1" && sync`, "sh", filepath.Join(data, "archive"), cpDst)
	})
	if mvErr != nil {
		return mvErr
	}
	os.RemoveAll(cpDst)
	one := fmt.Sprintf("migration forced to copy on one filesystem, %s snapshots", count(cn))
	b.Add(Row{Work: one, Unit: BytesPerSecond, Err: err,
		Value: float64(bytes) / copyRun.Wall.Seconds(), Baseline: float64(bytes) / cps.Wall.Seconds(), BaselineName: "cp -a + sync"})
	b.Add(Row{Work: one + " vs a move", Unit: BytesPerSecond, Err: err,
		Value: float64(bytes) / copyRun.Wall.Seconds(), Baseline: float64(bytes) / mv.Wall.Seconds(), BaselineName: "cp -a, sync, rm -rf, sync"})
	return nil
}

// migrateAcross measures the copy path where PRODUCT.md states its goal:
// a migration whose destination is another filesystem (see twoFS), beside
// cp -a of the same folders between the same two filesystems followed by
// sync (the migration makes its copies durable before it deletes a
// source), goal ≥ 70 % of its throughput; and beside a move by cp -a and
// rm -rf, which is what the migration does.
func (b *B) migrateAcross(tmpl string, bytes int64, work string) error {
	t, err := newTwoFS(b, max(4*bytes, 1<<30))
	if err != nil {
		return err
	}
	defer t.close()
	reset := func() error { return t.reset(tmpl) }
	cps, err := b.Repeat(reset, func() *exec.Cmd { return t.copyCmd("sync") })
	if err != nil {
		return err
	}
	mv, err := b.Repeat(reset, func() *exec.Cmd {
		return t.copyCmd(`sync && find "$1" -mindepth 1 -maxdepth 1 ! -name users -exec rm -rf {} + && sync`)
	})
	if err != nil {
		return err
	}
	mig, err := b.Repeat(reset, func() *exec.Cmd { return b.FolioCmd(t.data, "update", "--migrate-only", "-q") })
	rate := float64(bytes) / mig.Wall.Seconds()
	b.Add(Row{Work: work, Unit: BytesPerSecond, Goal: Goal{MinRatio: 0.7}, Err: err,
		Value: rate, Baseline: float64(bytes) / cps.Wall.Seconds(), BaselineName: "cp -a + sync",
		Note: fmt.Sprintf("ext4 on loop devices; cpu %.1f s, cp -a %.1f s", mig.CPU.Seconds(), cps.CPU.Seconds())})
	b.Add(Row{Work: work + " vs a move", Unit: BytesPerSecond, Err: err,
		Value: rate, Baseline: float64(bytes) / mv.Wall.Seconds(), BaselineName: "cp -a, sync, rm -rf, sync"})
	return nil
}

// legacyTemplate generates (once per scratch directory) a legacy
// collection to copy from.
func (b *B) legacyTemplate(name string, o gen.LegacyOptions) (string, error) {
	dir := filepath.Join(b.Work, name)
	done := dir + ".done"
	if _, err := os.Stat(done); err == nil {
		return dir, nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	b.Logf("generating %s: %d legacy %s snapshots of %d files", name, o.N, o.Version, o.Files)
	if _, err := gen.Legacy(dir, o); err != nil {
		return "", fmt.Errorf("generate %s: %w", name, err)
	}
	return dir, os.WriteFile(done, nil, 0o644)
}

// treeSize is the bytes of the regular files under root.
func treeSize(root string) (int64, error) {
	var n int64
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			n += fi.Size()
		}
		return nil
	})
	return n, err
}
