package export_test

import (
	"context"
	"testing"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/export"
	"github.com/folio-archive/folio/gen"
)

// BenchmarkFullExport exports a generated collection of 2000 snapshots in
// place, rewriting every page.
func BenchmarkFullExport(b *testing.B) {
	c, _ := generated(b, 2000, 9)
	run(b, export.Options{Collection: c})
	b.ResetTimer()
	for b.Loop() {
		if _, err := export.Run(context.Background(), export.Options{Collection: c, Full: true, SkipReindex: true}, archive.Discard); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(2000*b.N)/b.Elapsed().Seconds(), "pages/s")
}

// BenchmarkReexport exports after one snapshot changed.
func BenchmarkReexport(b *testing.B) {
	c, m := generated(b, 2000, 9)
	run(b, export.Options{Collection: c})
	dir := c.Path(m.Snapshots[1000].Dir)
	i := 0
	b.ResetTimer()
	for b.Loop() {
		i++
		b.StopTimer()
		if err := gen.RetitleIndex(dir, "edit "+itoa(i)); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := export.Run(context.Background(), export.Options{Collection: c}, archive.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
