package main

import (
	"context"
	"strings"

	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/backends"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/server"
)

func init() {
	register("ask", "answer a question with citations: retrieve, then the generator (--chat-url, --chat-model) writes a short answer; --server URL asks a running dmar serve", askCommand.run)
}

var askCommand = requester[api.AnswerResponse]{
	name: "ask", route: "/v1/answer", what: "answer", body: api.RawRequest, write: api.WriteAnswer,
	check: func(a *appFlags) error { return backends.Answerer(a.cfg.Chat, nil).Check() },
	local: func(ctx context.Context, a *appFlags, p *pipeline.Pipeline, reqJSON []byte) (*api.AnswerResponse, error) {
		req, err := server.DecodeAnswer(strings.NewReader(string(reqJSON)), p.Defaults())
		if err != nil {
			return nil, err
		}
		return server.AnswerQuery(ctx, p, backends.Answerer(a.cfg.Chat, p.Encoder()), a.cfg.Chat.Model, req, nil)
	},
}

// runAsk is dmar ask.
var runAsk = askCommand.run
