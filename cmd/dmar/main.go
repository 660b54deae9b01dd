// Command dmar serves and evaluates DMAR retrieval (Dynamic Multi-Anchor
// Retrieval). It is the only composition root: subcommands pick backends and
// models from configuration and hand them to the pipeline.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/dmar-kg/dmar/internal/cli"
	"github.com/dmar-kg/dmar/loaders/sinks"
)

// commands are dmar's subcommands; files in this package register theirs
// in init().
var commands cli.Commands

func register(name, summary string, run cli.Func) { commands.Register(name, summary, run) }

// usageError makes main print usage and exit 2.
type usageError = cli.UsageError

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.ExitCode(Run(ctx, os.Args[1:], os.Stdout, os.Stderr), os.Stderr)
	stop()
	os.Exit(code)
}

// Run dispatches args to a subcommand; names with spaces ("load kg") take two words.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return commands.Run(ctx, args, stdout, stderr)
}

var (
	newFlagSet = cli.NewFlagSet
	flagErr    = cli.FlagErr
)

// cliErr makes an errs.Invalid error or a bad sink target a usageError
// (exit 2).
func cliErr(err error) error { return cli.Invalid(err, sinks.ErrTarget) }
