package main

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/folio-archive/folio/fixtures"
	"github.com/folio-archive/folio/plugins"
)

func init() {
	suites = append(suites, Suite{
		Name: "capture-warc",
		Doc:  "add of 20 fixture pages with and without the warc plugin (interleaved), and peak RSS of a page with a 1 MB and a 30 MB image",
		Run:  runCaptureWARC,
	})
}

// runCaptureWARC measures what the warc plugin costs:
//
//   - `folio add` of 20 fixture pages with every built-in plugin, beside
//     the same add with WARC_ENABLED=false; the two alternate run by run
//     so that a slower moment of the machine weighs on both (goal: ≤ 1.1×);
//   - folio's peak RSS in `folio add --plugins warc` of a page holding a
//     1 MB and one holding a 30 MB image, attached to a Chromium of its
//     own so that Chromium's memory is not counted (goal: memory does not
//     grow with the page, ≤ 1.25×); the note gives the 30 MB page without
//     the WARC.
func runCaptureWARC(b *B) error {
	cfg, err := plugins.LoadConfig("/nonexistent", os.Environ())
	if err != nil {
		return err
	}
	if plugins.FindChromium(cfg) == "" {
		return plugins.ErrNoBrowser
	}
	srv, err := startBigSite()
	if err != nil {
		return err
	}
	defer srv.Close()
	base := "http://" + srv.Addr
	urls := make([]string, capturePages)
	for i := range urls {
		urls[i] = fmt.Sprintf("%s%s?copy=%d", base, fixtures.Pages[i%len(fixtures.Pages)], i)
	}
	data := filepath.Join(b.Work, "capture-warc-data")
	defer os.RemoveAll(data)
	add := func(env string, args ...string) (Measure, error) {
		if err := os.RemoveAll(data); err != nil {
			return Measure{}, err
		}
		if err := b.FolioCmd(data, "init", "-q").Run(); err != nil {
			return Measure{}, err
		}
		cmd := b.FolioCmd(data, append([]string{"add", "-q", "--per-domain", "0"}, args...)...)
		cmd.Env = append(cmd.Env, env)
		return b.Run(cmd)
	}
	perPage := func(m Measure) float64 { return m.Wall.Seconds() / capturePages }

	pages := append([]string{"--parallel", "4"}, urls...)
	with, without, err := interleave(b, func() (Measure, error) { return add("WARC_ENABLED=true", pages...) },
		func() (Measure, error) { return add("WARC_ENABLED=false", pages...) })
	row := Row{Work: fmt.Sprintf("add, %d pages, all built-in plugins, --parallel 4, with warc (per page)", capturePages),
		Value: perPage(with), Err: err, Goal: Goal{MaxRatio: 1.1},
		Baseline: perPage(without), BaselineName: "the same add with WARC_ENABLED=false"}
	if err == nil {
		row.Note = fmt.Sprintf("peak RSS %.0f MB with, %.0f MB without; %.1f s cpu with, %.1f s without",
			float64(with.MaxRSS)/1e6, float64(without.MaxRSS)/1e6, with.CPU.Seconds(), without.CPU.Seconds())
	}
	b.Add(row)

	// Peak RSS counts the children a process waited for: folio attaches to
	// a Chromium of its own here, so that the figures are folio's.
	cdp, stop, err := startCDPChromium(b, plugins.FindChromium(cfg))
	if err != nil {
		b.Fail("add --plugins warc of a page with a 30 MB image: folio's peak RSS", err)
		return nil
	}
	defer stop()
	add = func(env string, args ...string) (Measure, error) {
		if err := os.RemoveAll(data); err != nil {
			return Measure{}, err
		}
		if err := b.FolioCmd(data, "init", "-q").Run(); err != nil {
			return Measure{}, err
		}
		cmd := b.FolioCmd(data, append([]string{"add", "-q"}, args...)...)
		cmd.Env = append(cmd.Env, env, "CHROME_CDP_URL="+cdp)
		return b.Run(cmd)
	}
	small, err := repeatMeasure(b, func() (Measure, error) { return add("WARC_ENABLED=true", "--plugins", "warc", base+"/big/1.html") })
	if err != nil {
		b.Fail("add --plugins warc of a page with a 30 MB image: folio's peak RSS", err)
		return nil
	}
	large, err := repeatMeasure(b, func() (Measure, error) { return add("WARC_ENABLED=true", "--plugins", "warc", base+"/big/30.html") })
	row = Row{Work: "add --plugins warc of a page with a 30 MB image: folio's peak RSS", Unit: Bytes, Value: float64(large.MaxRSS), Err: err,
		Goal: Goal{MaxRatio: 1.25}, Baseline: float64(small.MaxRSS), BaselineName: "the same with a 1 MB image (folio alone)"}
	if err == nil {
		if plain, err := repeatMeasure(b, func() (Measure, error) {
			return add("WARC_ENABLED=false", "--plugins", "title", base+"/big/30.html")
		}); err == nil {
			row.Note = fmt.Sprintf("30 MB page without a WARC (--plugins title): %.0f MB; with: %.1f s, 1 MB page %.1f s",
				float64(plain.MaxRSS)/1e6, large.Wall.Seconds(), small.Wall.Seconds())
		}
	}
	b.Add(row)
	return nil
}

// interleave measures a and b alternately b.Runs times each and returns
// the median of each.
func interleave(bb *B, a, b func() (Measure, error)) (Measure, Measure, error) {
	var as, bs []Measure
	for range max(bb.Runs, 1) {
		ma, err := a()
		if err != nil {
			return Measure{}, Measure{}, err
		}
		mb, err := b()
		if err != nil {
			return Measure{}, Measure{}, err
		}
		as, bs = append(as, ma), append(bs, mb)
	}
	return median(as), median(bs), nil
}

// repeatMeasure runs f b.Runs times and returns the median.
func repeatMeasure(b *B, f func() (Measure, error)) (Measure, error) {
	var all []Measure
	for range max(b.Runs, 1) {
		m, err := f()
		if err != nil {
			return m, err
		}
		all = append(all, m)
	}
	return median(all), nil
}

// median is the median of each figure of ms.
func median(ms []Measure) Measure {
	mid := func(f func(Measure) int64) int64 {
		v := make([]int64, len(ms))
		for i, m := range ms {
			v[i] = f(m)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	return Measure{
		Wall:      time.Duration(mid(func(m Measure) int64 { return int64(m.Wall) })),
		FirstLine: time.Duration(mid(func(m Measure) int64 { return int64(m.FirstLine) })),
		CPU:       time.Duration(mid(func(m Measure) int64 { return int64(m.CPU) })),
		MaxRSS:    mid(func(m Measure) int64 { return m.MaxRSS }),
		Lines:     mid(func(m Measure) int64 { return m.Lines }),
		Bytes:     mid(func(m Measure) int64 { return m.Bytes }),
	}
}

// startCDPChromium starts a headless Chromium with remote debugging on a
// loopback port and returns its http:// URL for CHROME_CDP_URL and the
// function that stops it.
func startCDPChromium(b *B, exe string) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	profile, err := os.MkdirTemp(b.Work, "cdp-profile-")
	if err != nil {
		return "", nil, err
	}
	args := []string{"--headless", "--disable-gpu", "--hide-scrollbars", "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--disable-extensions", "--disable-dev-shm-usage", "--mute-audio",
		"--remote-debugging-address=127.0.0.1", fmt.Sprintf("--remote-debugging-port=%d", port), "--user-data-dir=" + profile}
	if os.Geteuid() == 0 {
		args = append(args, "--no-sandbox")
	}
	cmd := exec.Command(exe, append(args, "about:blank")...)
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() {
		cmd.Process.Kill()
		cmd.Wait()
		os.RemoveAll(profile)
	}
	u := fmt.Sprintf("http://127.0.0.1:%d", port)
	for range 100 {
		if resp, err := http.Get(u + "/json/version"); err == nil {
			resp.Body.Close()
			return u, stop, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	stop()
	return "", nil, fmt.Errorf("%s did not open its debugging port %d", exe, port)
}

// startBigSite serves the fixture site on loopback, plus /big/N.html: a
// page showing /big/N.png, the fixture image followed by N MB of random
// bytes (a browser shows the image and reads every byte of it).
func startBigSite() (*http.Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	img, err := fixtures.Read("image.png", "")
	if err != nil {
		return nil, err
	}
	pad := make([]byte, 30<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i+8 <= len(pad); i += 8 {
		v := rng.Uint64()
		for j := range 8 {
			pad[i+j] = byte(v >> (8 * j))
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/", fixtures.Handler())
	mux.HandleFunc("/big/{name}", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		ext := filepath.Ext(name)
		n, err := strconv.Atoi(name[:len(name)-len(ext)])
		if err != nil || n < 0 || n > 30 {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		switch ext {
		case ".html":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, "<!DOCTYPE html><html><head><title>A %d MB image</title></head><body><h1>A %d MB image</h1><img src=\"/big/%d.png\" width=64 height=64></body></html>", n, n, n)
		case ".png":
			w.Header().Set("Content-Type", "image/png")
			w.Header().Set("Content-Length", strconv.Itoa(len(img)+n<<20))
			w.Write(img)
			w.Write(pad[:n<<20])
		default:
			http.NotFound(w, r)
		}
	})
	srv := &http.Server{Addr: ln.Addr().String(), Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return srv, nil
}
