package main

import (
	"context"
	"strings"

	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/server"
)

func init() {
	register("query", "answer one question from the shell (a table, or --json for the API's JSON); --server URL asks a running dmar serve", queryCommand.run)
}

var queryCommand = requester[api.RetrieveResponse]{
	name: "query", route: "/v1/retrieve", body: api.RawRequest, write: api.WriteTable,
	local: func(ctx context.Context, _ *appFlags, p *pipeline.Pipeline, reqJSON []byte) (*api.RetrieveResponse, error) {
		req, err := server.DecodeRetrieve(strings.NewReader(string(reqJSON)), p.Defaults())
		if err != nil {
			return nil, pipeline.RemovedOption(err)
		}
		res, err := p.Retrieve(ctx, req.Query, req.Options)
		if err != nil {
			return nil, err
		}
		return server.ToRetrieveResponse(res), nil
	},
}
