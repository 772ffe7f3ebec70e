package main

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Every short flag has one meaning across folio (flags_test.go walks the
// commands to keep it so):
//
//	-D --data-dir   -q --quiet (both global)
//	-f --filter-type  -t --tag  -s --status  -o --sort  -n --limit (as ArchiveBox's list)
//	-j --parallel   -p --plugins  -d --depth  -y --yes
//
// --dry-run, --force and --out have no short form: a letter that meant
// one of them in an earlier folio now fails as unknown, changing nothing.

// parallelFlag registers --parallel (-j) on f into p, and the name an
// earlier folio used for it (--workers) as a hidden, deprecated alias.
func parallelFlag(f *pflag.FlagSet, p *int, def int, usage string) {
	f.IntVarP(p, "parallel", "j", def, usage)
	f.IntVar(p, "workers", def, usage)
	_ = f.MarkDeprecated("workers", "use --parallel (-j)")
}

// checkCounts refuses a negative number or duration given to any flag of
// cmd: a usage error naming the flag, before the command does anything.
func checkCounts(cmd *cobra.Command) error {
	var err error
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		switch fl.Value.Type() {
		case "int", "int8", "int16", "int32", "int64", "duration", "float32", "float64":
		default:
			return
		}
		if err == nil && strings.HasPrefix(fl.Value.String(), "-") {
			err = usagef("--%s %s: must not be negative", fl.Name, fl.Value)
		}
	})
	return err
}
