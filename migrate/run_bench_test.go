package migrate

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/gen"
)

// benchN is the collection size of the migration benchmarks:
// FOLIO_BENCH_N, default 1000 (the product goal is stated for 10000).
func benchN(b *testing.B) int {
	if s := os.Getenv("FOLIO_BENCH_N"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("FOLIO_BENCH_N=%q: want a positive number", s)
		}
		return n
	}
	return 1000
}

// benchTemplate generates a 0.7 collection (database plus legacy folders
// of 10 files each) once per benchmark.
func benchTemplate(b *testing.B, size int) (string, int) {
	b.Helper()
	n := benchN(b)
	dir := filepath.Join(b.TempDir(), "template")
	if _, err := gen.Legacy(dir, gen.LegacyOptions{Version: gen.Legacy07, N: n, Files: 10, Size: size, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	return dir, n
}

// fresh copies the template to a new data dir, outside the timer.
func fresh(b *testing.B, template string) string {
	b.Helper()
	dir := filepath.Join(b.TempDir(), "data")
	if out, err := exec.Command("cp", "-a", template, dir).CombinedOutput(); err != nil {
		b.Fatalf("cp -a: %v %s", err, out)
	}
	exec.Command("sync").Run()
	return dir
}

func benchMigrate(b *testing.B, forceCopy bool, size int) {
	template, n := benchTemplate(b, size)
	var moved int64
	var cpTime time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if forceCopy {
			// The baseline, on the same data in the same run: cp -a of
			// the legacy folders, written back to disk like the
			// migration's copies before it deletes anything.
			dir := fresh(b, template)
			start := time.Now()
			if out, err := exec.Command("cp", "-a", filepath.Join(dir, "archive"), filepath.Join(dir, "copy")).CombinedOutput(); err != nil {
				b.Fatalf("cp -a: %v %s", err, out)
			}
			exec.Command("sync").Run()
			cpTime += time.Since(start)
			os.RemoveAll(dir)
		}
		dir := fresh(b, template)
		c, err := archive.Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		st, err := Run(context.Background(), c, Options{ForceCopy: forceCopy, Workers: benchWorkers()})
		if err != nil {
			b.Fatal(err)
		}
		if st.Migrated != int64(n) {
			b.Fatalf("migrated %d of %d", st.Migrated, n)
		}
		moved += st.Bytes
		b.StopTimer()
		os.RemoveAll(dir)
		b.StartTimer()
	}
	el := b.Elapsed().Seconds()
	b.ReportMetric(float64(n*b.N)/el, "snapshots/s")
	b.ReportMetric(float64(moved)/el/1e6, "MB/s")
	if forceCopy && cpTime > 0 {
		cpRate := float64(moved) / cpTime.Seconds() / 1e6
		b.ReportMetric(cpRate, "cp-a+sync-MB/s")
		b.ReportMetric(float64(moved)/el/1e6/cpRate, "ratio-to-cp")
	}
}

// BenchmarkMigrateRename migrates a 0.7 collection on one filesystem
// (every folder renamed). Goal: 10k snapshots in ≤ 10 s.
func BenchmarkMigrateRename(b *testing.B) { benchMigrate(b, false, 1024) }

// BenchmarkMigrateCopy forces the copy path (copy, verify, index, sync,
// recheck, delete) and reports its throughput beside cp -a of the same
// data. Goal: ≥ 70 % of cp -a.
func BenchmarkMigrateCopy(b *testing.B) { benchMigrate(b, true, 16<<10) }

// benchWorkers is FOLIO_BENCH_WORKERS, default 8 (the CLI's default).
func benchWorkers() int {
	if n, err := strconv.Atoi(os.Getenv("FOLIO_BENCH_WORKERS")); err == nil && n > 0 {
		return n
	}
	return 8
}
