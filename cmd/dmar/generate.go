package main

import (
	"context"
	"flag"
	"io"
	"strings"
	"time"

	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/pipeline"
)

// generated are the parts of a command that retrieves and then asks the
// generator (dmar ask, dmar verify): its route, its request body from the
// arguments and -o options, the local run over a pipeline, and its text
// output.
type generated[R any] struct {
	name, route, what string
	body              func(text string, opts []string) ([]byte, error)
	check             func(a *appFlags) error // refuses before the pipeline is built (no generator)
	local             func(ctx context.Context, a *appFlags, p *pipeline.Pipeline, reqJSON []byte) (*R, error)
	write             func(io.Writer, *R) error
}

// run parses the flags, then asks the server at --server, or builds a local
// pipeline, within --timeout, and prints the result (--json: as the route
// returns it).
func (g generated[R]) run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var a appFlags
	fs := a.flags(g.name, stderr)
	asJSON, serverURL, opts := requestFlags(fs, g.route)
	timeout := fs.Duration("timeout", 2*time.Minute, "time limit of the retrieval and the "+g.what+" together")
	if err := a.parse(fs, args); err != nil {
		return err
	}
	reqJSON, err := g.request(fs, *opts)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	res := new(R)
	if *serverURL != "" {
		err = postServer(ctx, *serverURL, g.route, 0, reqJSON, res) // ctx carries --timeout
	} else {
		res, err = g.runLocal(ctx, &a, reqJSON, stderr, *asJSON)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return api.WriteJSON(stdout, res)
	}
	return g.write(stdout, res)
}

func (g generated[R]) request(fs *flag.FlagSet, opts optionList) ([]byte, error) {
	b, err := g.body(strings.Join(fs.Args(), " "), opts)
	if err != nil {
		return nil, usageError{err.Error()}
	}
	return b, nil
}

func (g generated[R]) runLocal(ctx context.Context, a *appFlags, reqJSON []byte, stderr io.Writer, quiet bool) (*R, error) {
	if err := g.check(a); err != nil {
		return nil, err
	}
	a.cfg.Quiet = a.cfg.Quiet || quiet
	p, set, err := a.pipelineFor(ctx, stderr, warnLogger(stderr), nil)
	if err != nil {
		return nil, err
	}
	defer set.Close()
	return g.local(ctx, a, p, reqJSON)
}
