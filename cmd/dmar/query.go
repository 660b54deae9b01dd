package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
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
	fs := flag.NewFlagSet("query", flag.ContinueOnError)
	fs.SetOutput(stderr)
	a.register(fs)
	asJSON, serverURL, opts := requestFlags(fs, "/v1/retrieve")
	if err := a.parse(fs, args); err != nil {
		return err
	}
	reqJSON, err := requestBody(strings.Join(fs.Args(), " "), *opts)
	if err != nil {
		return err
	}
	if *serverURL != "" {
		var res api.RetrieveResponse
		if err := postServer(ctx, *serverURL, "/v1/retrieve", 5*time.Minute, reqJSON, &res); err != nil {
			return err
		}
		return printResult(stdout, &res, *asJSON)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	a.cfg.Quiet = a.cfg.Quiet || *asJSON
	p, m, _, err := a.pipelineFor(ctx, stderr, log, nil)
	if err != nil {
		return err
	}
	defer m.Close()
	req, err := server.DecodeRetrieve(strings.NewReader(string(reqJSON)), p.Defaults())
	if err != nil {
		return pipeline.RemovedOption(err)
	}
	res, err := p.Retrieve(ctx, req.Query, req.Options)
	if err != nil {
		return err
	}
	return printResult(stdout, server.ToRetrieveResponse(res), *asJSON)
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

// serverClient is the API client of --server, with DMAR_API_KEY's key.
func serverClient(base string, timeout time.Duration) (*api.Client, error) {
	var opts []api.Option
	if k := config.ClientAPIKey(os.Getenv); k != "" {
		opts = append(opts, api.WithAPIKey(k))
	}
	c, err := api.NewClient(base, &http.Client{Timeout: timeout}, opts...)
	if err != nil {
		return nil, usageError{"--server: " + err.Error()}
	}
	return c, nil
}

// requestBody builds a request exactly as the API would receive it: the
// query and each -o name=value (a JSON value, else a string).
func requestBody(query string, opts optionList) ([]byte, error) {
	body := map[string]json.RawMessage{}
	q, _ := json.Marshal(query)
	body["query"] = q
	for _, kv := range opts {
		name, val, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, usageError{fmt.Sprintf("-o %q: want name=value", kv)}
		}
		raw := json.RawMessage(val)
		if !json.Valid(raw) {
			raw, _ = json.Marshal(val)
		}
		body[name] = raw
	}
	return json.Marshal(body)
}

// postServer sends the request body as built, unchanged, to route of the
// server at base, so that the server validates it exactly as a local
// request would be, and decodes the answer into out.
func postServer(ctx context.Context, base, route string, timeout time.Duration, reqJSON []byte, out any) error {
	c, err := serverClient(base, timeout)
	if err != nil {
		return err
	}
	return c.Do(ctx, http.MethodPost, route, json.RawMessage(reqJSON), out)
}

func printResult(w io.Writer, res *api.RetrieveResponse, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	return api.WriteTable(w, res)
}
