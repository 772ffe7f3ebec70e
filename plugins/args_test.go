package plugins

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

func TestChromeArgsExtraParses(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		bad  bool
	}{
		{"", nil, false},
		{`["--a", "--b=c d"]`, []string{"--a", "--b=c d"}, false},
		{"--a  --b=c", []string{"--a", "--b=c"}, false},
		{`["--a",`, nil, true},
		{"--a b", nil, true},
		{`["-x"]`, nil, true},
	} {
		cfg := testConfig(t, "CHROME_ARGS_EXTRA", c.in)
		got, err := cfg.ChromeArgsExtra()
		if (err != nil) != c.bad || strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("CHROME_ARGS_EXTRA=%q: got %q, %v", c.in, got, err)
		}
		if c.bad && cfg.Validate() == nil {
			t.Errorf("CHROME_ARGS_EXTRA=%q: Validate accepted it", c.in)
		}
	}
}

// The shared test browser is started with CHROME_ARGS_EXTRA: Chromium's
// own chrome://version shows the flag on its command line.
func TestChromeArgsExtraReachChromium(t *testing.T) {
	b := browser(t)
	tab, cancel, err := b.tab()
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	ctx, cancelT := context.WithTimeout(tab, 30*time.Second)
	defer cancelT()
	if _, err := chromedp.Run(ctx, chromedp.Navigate("chrome://version")); err != nil {
		t.Fatal(err)
	}
	line, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#command_line").innerText`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(line, "--run-all-compositor-stages-before-draw") {
		t.Fatalf("the flag is not on Chromium's command line: %s", line)
	}
}
