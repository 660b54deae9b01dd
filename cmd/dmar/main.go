// Command dmar serves and evaluates DMAR retrieval (Dynamic Multi-Anchor
// Retrieval). It is the only composition root: subcommands pick backends and
// models from configuration and hand them to the pipeline.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"
)

// command is one subcommand. Files in this package register theirs in init().
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

var commands = map[string]command{}

func register(name, summary string, run func(ctx context.Context, args []string, stdout, stderr io.Writer) error) {
	if _, dup := commands[name]; dup {
		panic("dmar: command registered twice: " + name)
	}
	commands[name] = command{summary: summary, run: run}
}

// usageError makes main print usage and exit 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case errors.As(err, new(usageError)):
		fmt.Fprintln(os.Stderr, "dmar:", err)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "dmar:", err)
		os.Exit(1)
	}
}

// Run dispatches args to a subcommand; names with spaces ("load kg") take two words.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		return nil
	}
	if len(args) >= 2 {
		if c, ok := commands[args[0]+" "+args[1]]; ok {
			return c.run(ctx, args[2:], stdout, stderr)
		}
	}
	if c, ok := commands[args[0]]; ok {
		return c.run(ctx, args[1:], stdout, stderr)
	}
	return usageError{fmt.Sprintf("unknown command %q (dmar help lists them)", args[0])}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "dmar: knowledge-graph-aware retrieval (Dynamic Multi-Anchor Retrieval)\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-16s %s\n", n, commands[n].summary)
	}
}
