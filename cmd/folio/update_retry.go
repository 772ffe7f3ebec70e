package main

import (
	"os"
	"strconv"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/capture"
	"github.com/folio-archive/folio/plugins"
)

// retryFlags are the flags of 'folio update' without --migrate-only.
type retryFlags struct {
	only      string
	overwrite bool
	parallel  int
	perDomain int
	timeout   int
}

func (r *retryFlags) register(f *pflag.FlagSet) {
	f.StringVarP(&r.only, "plugins", "p", "", "run only these plugins (comma-separated names); hashes still runs last")
	f.BoolVar(&r.overwrite, "overwrite", false, "also run the plugins that succeeded (their output is kept until the new one succeeds)")
	parallelFlag(f, &r.parallel, 0, "snapshots captured at once, one browser tab each (default 2); with --migrate-only, snapshots migrated at once (default 8)")
	f.IntVar(&r.perDomain, "per-domain", 2, "snapshots of one domain captured at once (0: as many as --parallel)")
	f.IntVar(&r.timeout, "timeout", 0, "TIMEOUT in seconds for plugins without their own <PLUGIN>_TIMEOUT")
}

// captureOnly are the flags that only a capture update takes, and
// migrateOnly those that only --migrate-only takes.
var (
	captureOnly = []string{"plugins", "overwrite", "per-domain", "timeout", "filter-type", "tag", "status", "before", "after"}
	migrateOnly = []string{"resume", "batch-size"}
)

// onlyCapture refuses the capture flags with --migrate-only.
func (r *retryFlags) onlyCapture(cmd *cobra.Command) error {
	for _, name := range captureOnly {
		if cmd.Flags().Changed(name) {
			return usagef("--%s selects or runs plugins, so it cannot go with --migrate-only", name)
		}
	}
	if cmd.Flags().NArg() > 0 {
		return usagef("--migrate-only takes no PATTERN: it migrates every legacy folder")
	}
	return nil
}

// parallelOr is --parallel, def when it is not given.
func (r *retryFlags) parallelOr(cmd *cobra.Command, def int) (int, error) {
	switch {
	case !cmd.Flags().Changed("parallel") && !cmd.Flags().Changed("workers"):
		return def, nil
	case r.parallel < 1:
		return 0, usagef("--parallel %d: at least 1", r.parallel)
	}
	return r.parallel, nil
}

// runRetry is 'folio update [PATTERN...]': capture.Retry over the
// selected snapshots, then the summary table.
func runRetry(cmd *cobra.Command, e *env, args []string, sel *selection, r retryFlags, dryRun bool) error {
	for _, name := range migrateOnly {
		if cmd.Flags().Changed(name) {
			return usagef("--%s needs --migrate-only", name)
		}
	}
	var err error
	if r.parallel, err = r.parallelOr(cmd, 2); err != nil {
		return err
	}
	if r.perDomain < 0 {
		return usagef("--per-domain must be at least 1 (or 0 for no limit beyond --parallel)")
	}
	if err := sel.resolve(args); err != nil {
		return err
	}
	opts := capture.Options{Parallel: r.parallel, PerDomain: r.perDomain, Overwrite: r.overwrite,
		DryRun: dryRun, PlanOut: e.stdout}
	if r.only != "" {
		opts.Plugins = splitList(r.only)
	}
	if opts.Fault, err = envFault(); err != nil {
		return err
	}
	coll, unlock, err := e.openLocked("update")
	if err != nil {
		return err
	}
	defer unlock()
	if opts.Config, err = captureConfig(coll, r.timeout); err != nil {
		return err
	}
	p := e.printer()
	defer p.done()
	opts.Printer = p
	release := func() {}
	if !dryRun {
		rel, err := captureOnlyHere(cmd.Context(), coll, queueURL("", opts.Config.Get("QUEUE_URL")))
		if err != nil {
			return err
		}
		release = sync.OnceFunc(rel)
		defer release()
	}
	st, runErr := capture.Retry(cmd.Context(), coll, *sel.q, opts)
	if st == nil || dryRun {
		return runErr
	}
	if !e.quiet { // else the warnings and the error line said what went wrong
		if err := st.WriteUpdateTable(e.stdout, runErr); err != nil && runErr == nil {
			runErr = err
		}
	}
	release() // with the collection's lock, which the export takes
	unlock()
	siteRefresh{coll: coll, p: p, out: e.stdout}.run(cmd.Context(), st.Saved)
	return runErr
}

// captureConfig reads the capture settings of add and update:
// ArchiveBox.conf, then the environment, then --timeout.
func captureConfig(coll *archive.Collection, timeout int) (plugins.Config, error) {
	cfg, err := plugins.LoadConfig(coll.Path("ArchiveBox.conf"), os.Environ())
	if err != nil {
		return cfg, err
	}
	if timeout > 0 {
		cfg.Set("TIMEOUT", strconv.Itoa(timeout))
	}
	return cfg, nil
}
