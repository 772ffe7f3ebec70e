// Package plugins captures web pages into snapshot folders the way
// ArchiveBox's plugins do: each capture method is a plugin with
// ArchiveBox's name, order number and hook name, writing only inside
// <snapshot>/<plugin>/ with ArchiveBox's file names, and reporting one
// ArchiveResult (plugins spec §2, §3).
//
// Built-in plugins are native Go (a shared Chromium tab driven through
// chromedp for the ones that need a browser); external hooks
// (on_Snapshot__NN_name.ext executables under <data>/custom_plugins/) run
// with ArchiveBox's hook contract. A Registry holds the plugins of a run;
// a Runner runs them over one snapshot at a time.
package plugins

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"
)

// Statuses a plugin reports (plugins spec §3.4).
const (
	Succeeded = "succeeded"
	Failed    = "failed"
	Skipped   = "skipped"   // configuration prevented the run
	NoResults = "noresults" // ran without error and found nothing
)

// Plugin is one capture method.
type Plugin interface {
	// Name is ArchiveBox's plugin name, also the output folder's name.
	Name() string
	// Order is the NN of the hook name: plugins run in (Order, HookName)
	// order.
	Order() int
	// HookName is the name recorded in the ArchiveResult, as ArchiveBox's
	// hook file name without its extension.
	HookName() string
	// Browser reports whether the plugin needs the page loaded in the
	// snapshot's browser tab.
	Browser() bool
	// Run captures into job.PluginDir(Name()). The context carries the
	// plugin's timeout.
	Run(ctx context.Context, job *Job) Outcome
}

// Outcome is what one plugin run reports.
type Outcome struct {
	Status string
	// Output is the ArchiveResult's output_str: a path relative to the
	// snapshot folder on success (title reports the title itself), the
	// reason otherwise.
	Output string
	Cmd    []string // the command an external hook ran
}

func succeeded(output string) Outcome { return Outcome{Status: Succeeded, Output: output} }
func noResults(why string) Outcome    { return Outcome{Status: NoResults, Output: why} }

func failed(format string, args ...any) Outcome {
	for i, a := range args {
		if err, ok := a.(error); ok {
			args[i] = explain(err)
		}
	}
	return Outcome{Status: Failed, Output: fmt.Sprintf(format, args...)}
}

// Registry is the set of plugins a run may use, registered at start-up.
type Registry struct {
	byName map[string][]Plugin
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{byName: map[string][]Plugin{}} }

// Register adds p. A plugin may have several hooks (one Plugin each)
// under one name.
func (r *Registry) Register(p Plugin) { r.byName[p.Name()] = append(r.byName[p.Name()], p) }

// Names lists the registered plugin names, sorted.
func (r *Registry) Names() []string {
	names := make([]string, 0, len(r.byName))
	for n := range r.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Has reports whether a plugin of that name is registered.
func (r *Registry) Has(name string) bool { return len(r.byName[name]) > 0 }

// ErrUnknownPlugin is wrapped by Select's error for a name no plugin has.
var ErrUnknownPlugin = errors.New("unknown plugin")

// Select returns the plugins to run, in run order: those named in only
// (all when only is empty) whose <NAME>_ENABLED is not false. A plugin
// that is disabled gets no ArchiveResult at all, as in ArchiveBox.
func (r *Registry) Select(only []string, cfg Config) ([]Plugin, error) {
	want := map[string]bool{}
	for _, n := range only {
		if !r.Has(n) {
			return nil, fmt.Errorf("%w %q%s (the plugins: %s)", ErrUnknownPlugin, n, didYouMean(n, r.Names()), strings.Join(r.Names(), ", "))
		}
		want[n] = true
	}
	var out []Plugin
	for name, ps := range r.byName {
		if len(want) > 0 && !want[name] {
			continue
		}
		if !cfg.Enabled(name) {
			continue
		}
		out = append(out, ps...)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Order() != out[j].Order() {
			return out[i].Order() < out[j].Order()
		}
		return out[i].HookName() < out[j].HookName()
	})
	return out, nil
}

// builtin is the identity shared by the native plugins.
type builtin struct {
	name    string
	order   int
	browser bool
	hook    string // defaults to on_Snapshot__<order>_<name>
}

func (b builtin) Name() string  { return b.name }
func (b builtin) Order() int    { return b.order }
func (b builtin) Browser() bool { return b.browser }
func (b builtin) HookName() string {
	if b.hook != "" {
		return b.hook
	}
	return fmt.Sprintf("on_Snapshot__%02d_%s", b.order, b.name)
}

// Builtins returns a registry holding every native plugin.
func Builtins() *Registry {
	r := NewRegistry()
	for _, p := range []Plugin{
		&Staticfile{builtin{name: "staticfile", order: 26, browser: true, hook: "on_Snapshot__26_staticfile.daemon.bg"}},
		&Headers{builtin{name: "headers", order: 27, browser: true, hook: "on_Snapshot__27_headers.daemon.bg"}},
		&Favicon{builtin{name: "favicon", order: 37, browser: true, hook: "on_Snapshot__37_favicon.finite.bg"}},
		&SingleFile{builtin{name: "singlefile", order: 50, browser: true}},
		&Screenshot{builtin{name: "screenshot", order: 51, browser: true}},
		&PDF{builtin{name: "pdf", order: 52, browser: true}},
		&DOM{builtin{name: "dom", order: 53, browser: true}},
		&Title{builtin{name: "title", order: 54, browser: true}},
		&Readability{builtin{name: "readability", order: 56, browser: true}},
		&HTMLToText{builtin{name: "htmltotext", order: 58, browser: true}},
		&WARC{builtin{name: "warc", order: 90, browser: true}},
		&Hashes{builtin{name: "hashes", order: 93}},
	} {
		r.Register(p)
	}
	return r
}

// Job is one snapshot being captured, shared by its plugins in order.
type Job struct {
	URL        string
	Dir        string // the snapshot folder (absolute)
	SnapshotID string
	Depth      int
	Config     Config
	// Page is the snapshot's loaded browser tab; nil when no plugin of the
	// run needs a browser. Page.Err says why it could not be loaded.
	Page *Page
	// Static is set when the URL is not a page but a file (a PDF, an
	// image): it was saved as it is, and the page plugins have nothing to
	// do.
	Static string
	// Title is the best title found so far (title plugin).
	Title string
	// Links are the http(s) links of the page (for --depth 1).
	Links []string
	Now   func() time.Time
	HTTP  *http.Client

	recorder    *Recorder // records the job's exchanges for the warc plugin
	recorderErr error
}

// PluginDir is the output folder of a plugin: <snapshot>/<name>.
func (j *Job) PluginDir(name string) string { return j.Dir + "/" + name }
