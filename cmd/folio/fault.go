package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/migrate"
)

// folio's test-only knobs are environment variables documented here, not
// in any --help (a user has no use for them):
//
// FOLIO_FAULT=step:N[,step:N] exits with status 99 at the Nth time a step
// is reached. update --migrate-only's steps are planned, copied, verified,
// indexed, deleting, deleted, done, write and remove; forget:N instead
// drops the Nth move of the plan, as a faulty plan would, which the check
// after the run must report as left behind. temp (every command that
// writes) is an atomic write's temp file written, not yet renamed; add,
// update, export and remove name steps of their own.
//
// FOLIO_MIGRATE_COPY=1 makes update --migrate-only copy (and verify) even
// where a rename would do.

// envFault reads the testing knob FOLIO_FAULT for a command that writes:
// the hook it returns is the command's own named steps (nil when the
// variable is unset), and it is installed for every atomic write at
// archive.FaultTemp as well. A malformed value is a usage error.
func envFault() (func(step, what string) error, error) {
	fault, err := faultFromEnv(os.Getenv("FOLIO_FAULT"))
	if err != nil {
		return nil, usagef("FOLIO_FAULT: %v", err)
	}
	archive.SetFault(fault)
	return fault, nil
}

// faultFromEnv parses FOLIO_FAULT ("step:N", comma separated): the process
// exits with status 99, as abruptly as a kill (no deferred function runs),
// the Nth time step is reached (at migrate.FaultForget the step is dropped
// from the plan instead).
func faultFromEnv(spec string) (func(step, what string) error, error) {
	if spec == "" {
		return nil, nil
	}
	at := map[string]int64{}
	for _, part := range strings.Split(spec, ",") {
		step, n, ok := strings.Cut(strings.TrimSpace(part), ":")
		count, err := strconv.ParseInt(n, 10, 64)
		if !ok || step == "" || err != nil || count < 1 {
			return nil, errors.New("want step:N with N >= 1, e.g. copied:3")
		}
		at[step] = count
	}
	counts := map[string]*atomic.Int64{}
	for step := range at {
		counts[step] = new(atomic.Int64)
	}
	return func(step, what string) error {
		if c := counts[step]; c != nil && c.Add(1) == at[step] {
			if step == migrate.FaultForget {
				fmt.Fprintf(os.Stderr, "folio: FOLIO_FAULT %s:%d drops %s from the plan\n", step, at[step], what)
				return errors.New("forgotten by FOLIO_FAULT")
			}
			fmt.Fprintf(os.Stderr, "folio: FOLIO_FAULT %s:%d reached at %s\n", step, at[step], what)
			os.Exit(99)
		}
		return nil
	}, nil
}
