package main

import (
	"context"
	"flag"
	"io"
	"os"
	"strings"
	"time"

	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/config"
	"github.com/dmar-kg/dmar/internal/pipeline"
)

// requester is the shape of the commands that send one request (dmar
// query, ask, verify): its route, its request body from the arguments and
// -o options, the local run over a pipeline, and its text output.
type requester[R any] struct {
	// what names the generated part in --timeout's help; "" (dmar query):
	// no --timeout, and a server's answer gets 5 minutes.
	name, route, what string
	body              func(text string, opts []string) ([]byte, error)
	check             func(a *appFlags) error // refuses before the pipeline is built (no generator); nil: none
	local             func(ctx context.Context, a *appFlags, p *pipeline.Pipeline, reqJSON []byte) (*R, error)
	write             func(io.Writer, *R) error
}

// run parses the flags, then asks the server at --server, or builds a local
// pipeline (within --timeout), and prints the result (--json: as the route
// returns it).
func (g requester[R]) run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var a appFlags
	var f api.RequestFlags
	fs, err := a.parseArgs(g.name, args, stderr, func(fs *flag.FlagSet) { f.Register(fs, g.route, g.what) })
	if err != nil {
		return err
	}
	reqJSON, err := g.body(strings.Join(fs.Args(), " "), f.Options)
	if err != nil {
		return usageError{Msg: err.Error()}
	}
	ctx, cancel, httpTimeout := f.Limit(ctx)
	defer cancel()
	res := new(R)
	if f.Server != "" {
		err = postServer(ctx, f.Server, g.route, httpTimeout, reqJSON, res)
	} else {
		res, err = g.runLocal(ctx, &a, reqJSON, stderr, f.JSON)
	}
	if err != nil {
		return err
	}
	if f.JSON {
		return api.WriteJSON(stdout, res)
	}
	return g.write(stdout, res)
}

func (g requester[R]) runLocal(ctx context.Context, a *appFlags, reqJSON []byte, stderr io.Writer, quiet bool) (*R, error) {
	if g.check != nil {
		if err := g.check(a); err != nil {
			return nil, err
		}
	}
	a.cfg.Quiet = a.cfg.Quiet || quiet
	p, set, err := a.pipelineFor(ctx, stderr, warnLogger(stderr), nil)
	if err != nil {
		return nil, err
	}
	defer set.Close()
	return g.local(ctx, a, p, reqJSON)
}

// apiClient is the client of a server at base, with DMAR_API_KEY's key; a
// bad base is a usage error named by name (the flag).
func apiClient(name, base string, timeout time.Duration) (*api.Client, error) {
	c, err := api.Dial(base, config.ClientAPIKey(os.Getenv), timeout)
	if err != nil {
		return nil, usageError{Msg: name + err.Error()}
	}
	return c, nil
}

// postServer sends reqJSON to route of the server at base (api.Client.Post)
// and decodes the answer into out.
func postServer(ctx context.Context, base, route string, timeout time.Duration, reqJSON []byte, out any) error {
	c, err := apiClient("--server: ", base, timeout)
	if err != nil {
		return err
	}
	return c.Post(ctx, route, reqJSON, out)
}
