package catalog_test

import (
	"io"
	"os"
	"testing"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/archive/catalog"
	"github.com/folio-archive/folio/gen"
)

// benchN is the size of the generated tree the benchmarks run on; the
// 100k figures of PRODUCT.md are measured with the built binary.
const benchN = 2000

func benchTree(b *testing.B) *archive.Collection {
	b.Helper()
	c := newCollection(b)
	if _, err := gen.Current(c.Dir, gen.Options{N: benchN, Seed: 1, Minimal: true, NoSync: true}); err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkReindexEmpty reindexes a tree into an empty catalog.
func BenchmarkReindexEmpty(b *testing.B) {
	c := benchTree(b)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		for _, suffix := range []string{"", "-wal", "-shm"} {
			os.Remove(c.Path(archive.CatalogFile) + suffix)
		}
		cat, err := catalog.Open(ctx, c)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		st, err := cat.Reindex(ctx, catalog.ReindexOptions{})
		if err != nil || st.Added != benchN {
			b.Fatalf("%+v %v", st, err)
		}
		b.StopTimer()
		cat.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchN), "ns/snapshot")
}

// benchCatalog is a generated tree and its filled catalog.
func benchCatalog(b *testing.B) *catalog.Catalog {
	cat := openCatalog(b, benchTree(b))
	if _, err := cat.Reindex(ctx, catalog.ReindexOptions{}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	return cat
}

// BenchmarkReindexUnchanged reindexes a tree the catalog already holds.
func BenchmarkReindexUnchanged(b *testing.B) {
	cat := benchCatalog(b)
	for range b.N {
		st, err := cat.Reindex(ctx, catalog.ReindexOptions{})
		if err != nil || st.Unchanged != benchN {
			b.Fatalf("%+v %v", st, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchN), "ns/snapshot")
}

// BenchmarkListJSONL streams every snapshot as JSONL.
func BenchmarkListJSONL(b *testing.B) {
	cat := benchCatalog(b)
	for range b.N {
		w, _ := catalog.NewWriter(io.Discard, catalog.FormatJSONL, nil)
		if err := cat.Each(ctx, catalog.Query{}, w.Write); err != nil {
			b.Fatal(err)
		}
		w.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchN), "ns/snapshot")
}

// BenchmarkEachWithResults streams every snapshot with its results decoded.
func BenchmarkEachWithResults(b *testing.B) {
	cat := benchCatalog(b)
	for range b.N {
		if err := cat.Each(ctx, catalog.Query{WithResults: true}, func(catalog.Entry) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchN), "ns/snapshot")
}
