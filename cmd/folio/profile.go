package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
)

// startProfiles writes a CPU profile to $FOLIO_CPUPROFILE and, when the
// command ends, a heap (allocation) profile to $FOLIO_MEMPROFILE: what
// folio-bench -profile reads to find where a command's time goes. The
// returned function ends them.
func startProfiles(stderr io.Writer) func() {
	cpu, mem := os.Getenv("FOLIO_CPUPROFILE"), os.Getenv("FOLIO_MEMPROFILE")
	var f *os.File
	if cpu != "" {
		var err error
		if f, err = os.Create(cpu); err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(stderr, "folio: FOLIO_CPUPROFILE %s: %v\n", cpu, err)
			f = nil
		}
	}
	return func() {
		if f != nil {
			pprof.StopCPUProfile()
			f.Close()
		}
		if mem == "" {
			return
		}
		runtime.GC()
		m, err := os.Create(mem)
		if err == nil {
			err = pprof.Lookup("allocs").WriteTo(m, 0)
			m.Close()
		}
		if err != nil {
			fmt.Fprintf(stderr, "folio: FOLIO_MEMPROFILE %s: %v\n", mem, err)
		}
	}
}

// softMemoryLimit sets the Go heap's soft limit to limit bytes, unless
// GOMEMLIMIT says otherwise, and returns what puts the old one back. A
// command that walks the whole collection (export, verify) keeps its
// garbage collector lazy for speed (a large GOGC) but must not grow with
// the collection: near the limit the collector works harder instead.
func softMemoryLimit(limit int64) func() {
	if os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	old := debug.SetMemoryLimit(limit)
	return func() { debug.SetMemoryLimit(old) }
}

// lazyCollector makes the garbage collector run less often than the
// default (GOGC 400) under the soft heap limit limit, for a command that
// allocates much that dies at once and holds little (reindex, verify),
// and returns what puts both back.
func lazyCollector(limit int64) func() {
	gc := debug.SetGCPercent(400)
	restore := softMemoryLimit(limit)
	return func() {
		restore()
		debug.SetGCPercent(gc)
	}
}
