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
	register("verify", "verify a claim: retrieve, then the generator (--chat-url, --chat-model) gives SUPPORTS, REFUTES or NOT_ENOUGH_INFO and the retrieved sentences it rests on; --server URL asks a running dmar serve", verifyCommand.run)
}

var verifyCommand = requester[api.VerifyResponse]{
	name: "verify", route: "/v1/verify", what: "verdict", body: api.RawVerifyRequest, write: api.WriteVerdict,
	check: func(a *appFlags) error { return backends.Verifier(a.cfg.Chat, nil).Check() },
	local: func(ctx context.Context, a *appFlags, p *pipeline.Pipeline, reqJSON []byte) (*api.VerifyResponse, error) {
		req, err := server.DecodeVerify(strings.NewReader(string(reqJSON)), p.Defaults())
		if err != nil {
			return nil, err
		}
		return server.VerifyClaim(ctx, p, backends.Verifier(a.cfg.Chat, p.Encoder()), a.cfg.Chat.Model, req)
	},
}

// runVerify is dmar verify.
var runVerify = verifyCommand.run
