package main

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/backends"
	"github.com/dmar-kg/dmar/internal/server"
)

func init() {
	register("verify", "verify a claim: retrieve, then the generator (--chat-url, --chat-model) gives SUPPORTS, REFUTES or NOT_ENOUGH_INFO and the retrieved sentences it rests on; --server URL asks a running dmar serve", runVerify)
}

func runVerify(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var a appFlags
	fs := a.flags("verify", stderr)
	asJSON, serverURL, opts := requestFlags(fs, "/v1/verify")
	timeout := fs.Duration("timeout", 2*time.Minute, "time limit of the retrieval and the verdict together")
	if err := a.parse(fs, args); err != nil {
		return err
	}
	reqJSON, err := api.RawVerifyRequest(strings.Join(fs.Args(), " "), *opts)
	if err != nil {
		return usageError{err.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	var res *api.VerifyResponse
	if *serverURL != "" {
		res = new(api.VerifyResponse)
		err = postServer(ctx, *serverURL, "/v1/verify", 0, reqJSON, res) // ctx carries --timeout
	} else {
		res, err = verifyLocal(ctx, &a, reqJSON, stderr, *asJSON)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return api.WriteJSON(stdout, res)
	}
	return api.WriteVerdict(stdout, res)
}

func verifyLocal(ctx context.Context, a *appFlags, reqJSON []byte, stderr io.Writer, quiet bool) (*api.VerifyResponse, error) {
	v := backends.Verifier(a.cfg.Chat)
	if err := v.Check(); err != nil {
		return nil, err
	}
	a.cfg.Quiet = a.cfg.Quiet || quiet
	p, set, err := a.pipelineFor(ctx, stderr, warnLogger(stderr), nil)
	if err != nil {
		return nil, err
	}
	defer set.Close()
	req, err := server.DecodeVerify(strings.NewReader(string(reqJSON)), p.Defaults())
	if err != nil {
		return nil, err
	}
	return server.VerifyClaim(ctx, p, v, a.cfg.Chat.Model, req)
}
