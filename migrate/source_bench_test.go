package migrate_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/gen"
	"github.com/folio-archive/folio/migrate"
)

// bench10k is one generated 0.7 collection of 10,000 snapshots with ten
// files each, shared by the scan benchmarks of one run.
var bench10k struct {
	once sync.Once
	dir  string
	err  error
}

func legacy10k(b *testing.B) string {
	bench10k.once.Do(func() {
		bench10k.dir, bench10k.err = os.MkdirTemp("", "folio-bench-legacy-")
		if bench10k.err == nil {
			_, bench10k.err = gen.Legacy(bench10k.dir, gen.LegacyOptions{Version: gen.Legacy07, N: 10000, Files: 10, Size: 512, Seed: 1})
		}
	})
	if bench10k.err != nil {
		b.Fatal(bench10k.err)
	}
	return bench10k.dir
}

// BenchmarkScan10k scans 10k legacy folders plus their 0.7 database.
// Compare with BenchmarkScan10kBaselineCat, which only reads every
// index.json once, sequentially (what `cat archive/*/index.json` does).
func BenchmarkScan10k(b *testing.B) {
	dir := legacy10k(b)
	c, err := archive.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	cpu0 := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		inv, err := migrate.Scan(context.Background(), c, migrate.ScanOptions{IDs: counterIDs()})
		if err != nil {
			b.Fatal(err)
		}
		if len(inv.Items) != 10000 {
			b.Fatalf("%d items", len(inv.Items))
		}
	}
	b.ReportMetric(float64(b.N)*10000/b.Elapsed().Seconds(), "snapshots/s")
	b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
}

func BenchmarkScan10kBaselineCat(b *testing.B) {
	dir := legacy10k(b)
	entries, err := os.ReadDir(filepath.Join(dir, "archive"))
	if err != nil {
		b.Fatal(err)
	}
	cpu0 := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		n := 0
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(dir, "archive", e.Name(), "index.json"))
			if err == nil {
				n += len(data)
			}
		}
		if n == 0 {
			b.Fatal("read nothing")
		}
	}
	b.ReportMetric(float64(b.N)*10000/b.Elapsed().Seconds(), "snapshots/s")
	b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
}

// cpuTime is the user+system CPU time of this process: on a shared
// machine it tells the work done from the wait for a core.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bench10k.dir != "" {
		os.RemoveAll(bench10k.dir)
	}
	os.Exit(code)
}

// BenchmarkParseLegacyIndex is the cost of one generated 0.7 index.json,
// the bulk of a scan's CPU time.
func BenchmarkParseLegacyIndex(b *testing.B) {
	dir := b.TempDir()
	m, err := gen.Legacy(dir, gen.LegacyOptions{Version: gen.Legacy07, N: 1, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(m.Snapshots[0].Source), "index.json"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := archive.ParseLegacyIndex(data); err != nil {
			b.Fatal(err)
		}
	}
}
