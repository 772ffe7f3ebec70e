package capture

import (
	"context"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/plugins"
)

// The lines a run prints as it goes, so that a terminal is never silent
// while Chromium starts or a page loads: which browser, each snapshot as
// a worker takes it, and each one saved with its title and folder.

// announceBrowser says which Chromium the run starts (or attaches to).
func (r *run) announceBrowser() {
	if u := r.opts.Config.Get("CHROME_CDP_URL"); u != "" {
		r.p.Infof("connecting to Chromium at %s", u)
		return
	}
	if exe := plugins.FindChromium(r.opts.Config); exe != "" {
		r.p.Infof("starting Chromium (%s)", exe)
	}
}

// starting says a worker took s.
func (r *run) starting(s *snapshot) {
	if r.retries[s] != nil {
		r.p.Infof("updating %s (%s)", s.rec.URL, s.dir)
		return
	}
	r.p.Infof("capturing %s", s.rec.URL)
}

// finished says where s went when it was sealed with something archived
// (a failed one has had its warning), and lists it in Stats.Saved.
func (r *run) finished(ctx context.Context, s *snapshot) {
	if ctx.Err() != nil {
		return
	}
	s.mu.Lock()
	sealed := s.rec.Status == "sealed"
	state := archive.StateOf(s.rec, archive.Standing(s.ix.Results()))
	title := s.rec.Title
	s.mu.Unlock()
	if !sealed || state == archive.StateFailed {
		return
	}
	r.mu.Lock()
	r.st.Saved = append(r.st.Saved, s.dir)
	r.mu.Unlock()
	if title != "" {
		r.p.Infof("saved %q (%s) in %s", title, s.rec.URL, s.abs())
		return
	}
	r.p.Infof("saved %s in %s", s.rec.URL, s.abs())
}
