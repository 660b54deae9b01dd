// Package mcp serves dmar to language-model agents as Model Context
// Protocol tools: over stdio (dmar mcp) and over the streamable HTTP
// transport (POST /mcp on dmar serve). A tool is a thin adapter over one
// REST route: each call is one request to the REST handler, in process,
// with the caller's credentials, so that validation, API keys, the write
// permission, limits and error messages are the REST API's own, and a
// refusal comes back as a tool error carrying dmar's message.
package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Config is what the tools call and which of them are offered.
type Config struct {
	// API is dmar's REST handler (server.Server), called in process.
	API http.Handler
	// Spec is the OpenAPI document: the tools' input bounds are read from
	// its request schemas, so that both contracts stay one.
	Spec []byte
	// Answer offers the answer tool (a generator is configured).
	Answer bool
	// Documents offers the document tools (the server has a document store).
	Documents bool
	// CanWrite says whether a caller presenting these headers may change
	// documents; the write tools are listed for such callers only. Nil:
	// every caller.
	CanWrite func(http.Header) bool
	// Key is the API key the stdio transport presents (HTTP callers
	// present their own).
	Key string
	// Timeout bounds one POST /mcp, all its messages together (the
	// server's request_timeout; 0: only the request context's deadline).
	// A call still running then is stopped and answered with a JSON-RPC
	// error, as is a call whose client has gone.
	Timeout time.Duration
	// MaxBodyBytes bounds a POST /mcp body (0: the SDK's default, 4 MiB).
	MaxBodyBytes int64
	// MaxReplyBytes bounds a POST /mcp's answers together, as the REST
	// API's max_response_bytes bounds one answer (0: no bound); past it
	// each call is answered with a JSON-RPC error.
	MaxReplyBytes int
	Version       string
	Logger        *slog.Logger
}

// Service holds the two tool sets: with and without the write tools.
type Service struct {
	cfg          Config
	read, write  *mcp.Server
	writeHandler map[string]mcp.ToolHandler
}

// New builds the tools. It fails only on a Spec without the schemas the
// tools read their bounds from.
func New(cfg Config) (*Service, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	var spec openAPI
	if err := json.Unmarshal(cfg.Spec, &spec); err != nil {
		return nil, fmt.Errorf("mcp: read the OpenAPI document: %w", err)
	}
	s := &Service{cfg: cfg, writeHandler: map[string]mcp.ToolHandler{}}
	impl := &mcp.Implementation{Name: "dmar", Title: "dmar knowledge-graph retrieval", Version: cfg.Version}
	opts := &mcp.ServerOptions{Instructions: instructions, Logger: cfg.Logger}
	s.read, s.write = mcp.NewServer(impl, opts), mcp.NewServer(impl, opts)
	if err := s.addTools(spec); err != nil {
		return nil, err
	}
	// A read-only caller does not see the write tools; one that calls them
	// anyway gets the REST API's refusal, as a tool error.
	s.read.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if r, ok := req.(*mcp.CallToolRequest); ok && method == "tools/call" {
				if h := s.writeHandler[r.Params.Name]; h != nil {
					return h(ctx, r)
				}
			}
			return next(ctx, method, req)
		}
	})
	// Added last, so outermost: a refused write call is bounded too.
	s.read.AddReceivingMiddleware(bounded)
	s.write.AddReceivingMiddleware(bounded)
	return s, nil
}

const instructions = `dmar retrieves evidence documents for a question from a document corpus linked to a knowledge graph (Wikidata QIDs such as Q25188).
Start with retrieve: it returns the best documents, each with its score, the entities it mentions and the knowledge-graph paths from the question's entities that support it.
Use link to find the entities a text mentions, subgraph to look at an entity's neighbourhood, get_document to read a whole document.`

// Handler serves the streamable HTTP transport, stateless: every POST is
// answered on its own, with the tool set its credentials allow, within
// Config's bounds (time, body and reply size; the REST server bounds the
// batch and charges its messages before they get here).
func (s *Service) Handler() http.Handler {
	sdk := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		if s.canWrite(r.Header) {
			return s.write
		}
		return s.read
	}, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: s.cfg.Logger,
		// The REST server's Host check (loopback only without keys, else the
		// configured names) has already run: the SDK's own, stricter for a
		// proxied loopback listener, would refuse what dmar allows.
		DisableLocalhostProtection: true,
		// The SDK's default is 4 MiB; dmar's is the server's setting.
		MaxRequestBodyBytes: s.maxBody(),
		// Off by default, and only for the 2026-07-28 protocol: a request
		// of any version is cancelled by bounded, through its context.
		PropagateRequestCancellation: true})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.serveHTTP(w, r, sdk) })
}

// RunStdio serves one client over stdin and stdout until it leaves or ctx
// ends (ServeIO).
func (s *Service) RunStdio(ctx context.Context) error {
	return s.ServeIO(ctx, os.Stdin, os.Stdout)
}

// Connect serves one client over t (tests use in-memory transports).
func (s *Service) Connect(ctx context.Context, t mcp.Transport) (*mcp.ServerSession, error) {
	srv := s.read
	if s.canWrite(s.stdioHeader()) {
		srv = s.write
	}
	return srv.Connect(ctx, t, nil)
}

func (s *Service) canWrite(h http.Header) bool {
	return s.cfg.Documents && (s.cfg.CanWrite == nil || s.cfg.CanWrite(h))
}

func (s *Service) stdioHeader() http.Header {
	h := http.Header{}
	if s.cfg.Key != "" {
		h.Set("Authorization", "Bearer "+s.cfg.Key)
	}
	return h
}

// credentials are the headers a tool call presents to the REST API: those
// of the HTTP request that carried it, else the stdio key.
func (s *Service) credentials(req *mcp.CallToolRequest) http.Header {
	if req != nil && req.Extra != nil && req.Extra.Header != nil {
		h := http.Header{}
		for _, k := range []string{"Authorization", "X-API-Key", "X-Request-ID"} {
			if v := req.Extra.Header.Get(k); v != "" {
				h.Set(k, v)
			}
		}
		return h
	}
	return s.stdioHeader()
}
