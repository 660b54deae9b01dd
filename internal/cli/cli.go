// Package cli is dmar's subcommand frame: the registry of subcommands
// (a name with a space takes two words), dispatch, the usage listing, and
// the errors that make the process exit 2 (UsageError) or 0 (-h).
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/dmar-kg/dmar/internal/errs"
)

// Func runs one subcommand on its arguments.
type Func func(ctx context.Context, args []string, stdout, stderr io.Writer) error

type command struct {
	summary string
	run     Func
}

// Commands is a registry of subcommands; the zero value is empty.
type Commands struct{ m map[string]command }

// Register adds the subcommand name; a name registered twice panics.
func (c *Commands) Register(name, summary string, run Func) {
	if c.m == nil {
		c.m = map[string]command{}
	}
	if _, dup := c.m[name]; dup {
		panic("dmar: command registered twice: " + name)
	}
	c.m[name] = command{summary: summary, run: run}
}

// Run dispatches args to a subcommand; names with spaces ("load kg") take
// two words. No arguments, help, -h or --help list the commands on stdout.
func (c *Commands) Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		c.usage(stdout)
		return nil
	}
	if len(args) >= 2 {
		if cmd, ok := c.m[args[0]+" "+args[1]]; ok {
			return cmd.run(ctx, args[2:], stdout, stderr)
		}
	}
	if cmd, ok := c.m[args[0]]; ok {
		return cmd.run(ctx, args[1:], stdout, stderr)
	}
	// "dmar bench" (a group without its second word): name the group's commands.
	var group []string
	for name := range c.m {
		if first, second, ok := strings.Cut(name, " "); ok && first == args[0] {
			group = append(group, second)
		}
	}
	if len(group) > 0 {
		sort.Strings(group)
		what := "needs a subcommand"
		if len(args) >= 2 {
			what = fmt.Sprintf("has no subcommand %q", args[1])
		}
		return UsageError{fmt.Sprintf("%s %s: one of %s (dmar help lists them)", args[0], what, strings.Join(group, ", "))}
	}
	return UsageError{fmt.Sprintf("unknown command %q (dmar help lists them)", args[0])}
}

func (c *Commands) usage(w io.Writer) {
	fmt.Fprintln(w, "dmar: knowledge-graph-aware retrieval (Dynamic Multi-Anchor Retrieval)\n\nCommands:")
	names := make([]string, 0, len(c.m))
	for n := range c.m {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-16s %s\n", n, c.m[n].summary)
	}
}

// UsageError is a wrong invocation: the process prints it and exits 2.
type UsageError struct{ Msg string }

func (e UsageError) Error() string { return e.Msg }

// ExitCode is the process's exit status for err, a subcommand's result,
// which it prints on stderr first unless it is nil or -h's flag.ErrHelp.
func ExitCode(err error, stderr io.Writer) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, new(UsageError)):
		fmt.Fprintln(stderr, "dmar:", err)
		return 2
	default:
		fmt.Fprintln(stderr, "dmar:", err)
		return 1
	}
}

// NewFlagSet is every subcommand's flag set: errors and usage on stderr.
func NewFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// FlagErr makes a flag parsing error other than -h a UsageError.
func FlagErr(err error) error {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return err
	}
	return UsageError{err.Error()}
}

// Invalid makes an errs.Invalid error, or one that wraps any of targets, a
// UsageError (exit 2); other errors pass unchanged.
func Invalid(err error, targets ...error) error {
	if e, ok := errs.As(err); ok && e.Code == errs.Invalid {
		return UsageError{err.Error()}
	}
	for _, t := range targets {
		if errors.Is(err, t) {
			return UsageError{err.Error()}
		}
	}
	return err
}
