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
	register("ask", "answer a question with citations: retrieve, then the generator (--chat-url, --chat-model) writes a short answer; --server URL asks a running dmar serve", runAsk)
}

func runAsk(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var a appFlags
	fs := a.flags("ask", stderr)
	asJSON, serverURL, opts := requestFlags(fs, "/v1/answer")
	timeout := fs.Duration("timeout", 2*time.Minute, "time limit of the retrieval and the answer together")
	if err := a.parse(fs, args); err != nil {
		return err
	}
	reqJSON, err := requestBody(fs, *opts)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	var res *api.AnswerResponse
	if *serverURL != "" {
		res = new(api.AnswerResponse)
		err = postServer(ctx, *serverURL, "/v1/answer", 0, reqJSON, res) // ctx carries --timeout
	} else {
		res, err = askLocal(ctx, &a, reqJSON, stderr, *asJSON)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return api.WriteJSON(stdout, res)
	}
	return api.WriteAnswer(stdout, res)
}

func askLocal(ctx context.Context, a *appFlags, reqJSON []byte, stderr io.Writer, quiet bool) (*api.AnswerResponse, error) {
	ans := backends.Answerer(a.cfg.Chat)
	if err := ans.Check(); err != nil {
		return nil, err
	}
	a.cfg.Quiet = a.cfg.Quiet || quiet
	p, set, err := a.pipelineFor(ctx, stderr, warnLogger(stderr), nil)
	if err != nil {
		return nil, err
	}
	defer set.Close()
	req, err := server.DecodeAnswer(strings.NewReader(string(reqJSON)), p.Defaults())
	if err != nil {
		return nil, err
	}
	return server.AnswerQuery(ctx, p, ans, a.cfg.Chat.Model, req, nil)
}
