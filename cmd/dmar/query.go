package main

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/config"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/server"
)

func init() {
	register("query", "answer one question from the shell (a table, or --json for the API's JSON); --server URL asks a running dmar serve", runQuery)
}

// optionList collects repeated -o name=value flags.
type optionList []string

func (o *optionList) String() string     { return strings.Join(*o, ",") }
func (o *optionList) Set(s string) error { *o = append(*o, s); return nil }

func runQuery(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var a appFlags
	fs := a.flags("query", stderr)
	asJSON, serverURL, opts := requestFlags(fs, "/v1/retrieve")
	if err := a.parse(fs, args); err != nil {
		return err
	}
	reqJSON, err := requestBody(fs, *opts)
	if err != nil {
		return err
	}
	print := func(res *api.RetrieveResponse) error {
		if *asJSON {
			return api.WriteJSON(stdout, res)
		}
		return api.WriteTable(stdout, res)
	}
	if *serverURL != "" {
		var res api.RetrieveResponse
		if err := postServer(ctx, *serverURL, "/v1/retrieve", 5*time.Minute, reqJSON, &res); err != nil {
			return err
		}
		return print(&res)
	}
	a.cfg.Quiet = a.cfg.Quiet || *asJSON
	p, set, err := a.pipelineFor(ctx, stderr, warnLogger(stderr), nil)
	if err != nil {
		return err
	}
	defer set.Close()
	req, err := server.DecodeRetrieve(strings.NewReader(string(reqJSON)), p.Defaults())
	if err != nil {
		return pipeline.RemovedOption(err)
	}
	res, err := p.Retrieve(ctx, req.Query, req.Options)
	if err != nil {
		return err
	}
	return print(server.ToRetrieveResponse(res))
}

// requestFlags registers the flags dmar query and dmar ask share: --json,
// --server and the repeatable -o.
func requestFlags(fs *flag.FlagSet, route string) (asJSON *bool, serverURL *string, opts *optionList) {
	asJSON = fs.Bool("json", false, "print the same JSON as POST "+route)
	serverURL = fs.String("server", "", "ask the dmar server at this URL (http://HOST:PORT) instead of building a local pipeline; its API key, if it needs one, from env DMAR_API_KEY")
	opts = new(optionList)
	fs.Var(opts, "o", "a retrieval option as name=value, repeatable (e.g. -o k=10 -o shapley=montecarlo); names as in the API")
	return asJSON, serverURL, opts
}

// requestBody is the request the arguments (the query) and -o options make
// (api.RawRequest).
func requestBody(fs *flag.FlagSet, opts optionList) ([]byte, error) {
	b, err := api.RawRequest(strings.Join(fs.Args(), " "), opts)
	if err != nil {
		return nil, usageError{err.Error()}
	}
	return b, nil
}

// apiClient is the client of a server at base, with DMAR_API_KEY's key; a
// bad base is a usage error named by flag.
func apiClient(flag, base string, timeout time.Duration) (*api.Client, error) {
	var opts []api.Option
	if k := config.ClientAPIKey(os.Getenv); k != "" {
		opts = append(opts, api.WithAPIKey(k))
	}
	var hc *http.Client
	if timeout > 0 {
		hc = &http.Client{Timeout: timeout}
	}
	c, err := api.NewClient(base, hc, opts...)
	if err != nil {
		return nil, usageError{flag + err.Error()}
	}
	return c, nil
}

// postServer sends the request body as built, unchanged, to route of the
// server at base, so that the server validates it exactly as a local
// request would be, and decodes the answer into out.
func postServer(ctx context.Context, base, route string, timeout time.Duration, reqJSON []byte, out any) error {
	c, err := apiClient("--server: ", base, timeout)
	if err != nil {
		return err
	}
	return c.Do(ctx, http.MethodPost, route, json.RawMessage(reqJSON), out)
}
