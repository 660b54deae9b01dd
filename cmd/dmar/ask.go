package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/server"
)

func init() {
	register("ask", "answer a question with citations: retrieve, then the generator (--chat-url, --chat-model) writes a short answer; --server URL asks a running dmar serve", runAsk)
}

func runAsk(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var a appFlags
	fs := flag.NewFlagSet("ask", flag.ContinueOnError)
	fs.SetOutput(stderr)
	a.register(fs)
	asJSON, serverURL, opts := requestFlags(fs, "/v1/answer")
	timeout := fs.Duration("timeout", 2*time.Minute, "time limit of the retrieval and the answer together")
	if err := a.parse(fs, args); err != nil {
		return err
	}
	reqJSON, err := requestBody(strings.Join(fs.Args(), " "), *opts)
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
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	return writeAnswer(stdout, res)
}

func askLocal(ctx context.Context, a *appFlags, reqJSON []byte, stderr io.Writer, quiet bool) (*api.AnswerResponse, error) {
	ans := a.answerer()
	if err := ans.Check(); err != nil {
		return nil, err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	a.cfg.Quiet = a.cfg.Quiet || quiet
	p, m, _, err := a.pipelineFor(ctx, stderr, log, nil)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	req, err := server.DecodeAnswer(strings.NewReader(string(reqJSON)), p.Defaults())
	if err != nil {
		return nil, err
	}
	return server.AnswerQuery(ctx, p, ans, a.cfg.Chat.Model, req, nil)
}

// writeAnswer prints the answer, then each cited document's title.
func writeAnswer(w io.Writer, res *api.AnswerResponse) error {
	titles := map[string]string{}
	if res.Retrieval != nil {
		for _, d := range res.Retrieval.Results {
			titles[d.ID] = d.Title
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", res.Answer)
	for _, id := range res.Citations {
		fmt.Fprintf(&b, "  [%s] %s\n", id, titles[id])
	}
	if len(res.DroppedCitations) > 0 {
		fmt.Fprintf(&b, "  (dropped citations of documents the model was not shown: %s)\n", strings.Join(res.DroppedCitations, ", "))
	}
	fmt.Fprintf(&b, "(%s; retrieval %.0f ms, answer %.0f ms)\n", res.Model, res.TimingsMS["retrieve"], res.TimingsMS["generate"])
	_, err := io.WriteString(w, b.String())
	return err
}
