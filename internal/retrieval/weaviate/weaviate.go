// Package weaviate implements dmar's search port (retrieval.Index and
// retrieval.Writer) on a Weaviate server through weaviate-go-client v4: one
// collection per corpus, dmar's own encoder vectors (vectorizer none, HNSW with
// cosine distance), BM25 over title and text, hybrid search with Weaviate's
// fusion, filters on document ids and linked entities, and optional native
// multi-tenancy. Searches go over gRPC (grpc.go), or GraphQL without a gRPC
// address. Every outage or server-side failure comes back wrapped in
// errs.Unavail(err, "weaviate"), so the API answers 503 with Retry-After.
package weaviate

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/dmar-kg/dmar/internal/retrieval"
	wv "github.com/weaviate/weaviate-go-client/v4/weaviate"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/grpc"
)

var (
	_ retrieval.Index  = (*Store)(nil)
	_ retrieval.Writer = (*Store)(nil)
)

// DefaultClass is the collection name when none is given.
const DefaultClass = "Document"

// DefaultHybridCandidates is Weaviate's QUERY_HYBRID_MAXIMUM_RESULTS default:
// each hybrid sub-search fetches max(this, limit) candidates before fusion.
const DefaultHybridCandidates = 100

// Config says where the collection is and how to talk to it.
type Config struct {
	// URL of the REST/GraphQL endpoint, e.g. http://127.0.0.1:8080: the
	// first of Hosts.
	URL string
	// Hosts are the REST/GraphQL endpoints of every node of a cluster that
	// requests may go to, URL first (empty: URL alone). Requests take them
	// in turn, and one whose node cannot be reached goes to the next.
	Hosts []string
	// Class is the collection (one per corpus). It must start with an upper
	// case letter, as Weaviate requires.
	Class string
	// Tenant, when set, stores and searches the corpus as one tenant of a
	// multi-tenant collection (Weaviate's native tenants).
	Tenant string
	// GRPC is host:port of Weaviate's gRPC endpoint, used by batch imports
	// and by searches (Search, Documents, Cosines: grpc.go). Empty: both go
	// over REST and GraphQL.
	GRPC string
	// GRPCHosts are the gRPC endpoints of every node, GRPC first (empty:
	// GRPC alone); a batch whose node went away is sent to another.
	GRPCHosts []string
	// Shards and Replicas shape a collection New creates: Shards shards
	// (0: Weaviate's default, one per node), each held by Replicas nodes
	// (0: one; more needs that many nodes). With Replicas set, an existing
	// collection with another replication factor is refused.
	Shards, Replicas int
	// ReadConsistency is how many replicas answer a search or read (ONE,
	// QUORUM or ALL; default ONE); WriteConsistency how many acknowledge a
	// write before Put returns (default QUORUM).
	ReadConsistency, WriteConsistency string
	// BatchSize is the number of objects per import request (default 256).
	BatchSize int
	// EfConstruction and MaxConnections shape the HNSW graph of a
	// collection New creates (0: Weaviate's defaults, 128 and 32). An
	// insert's cost grows with both, and so, on a small node, does the time
	// a large import takes; recall falls as they shrink (dmar bench scale
	// measures both).
	EfConstruction, MaxConnections int
	// RQ, when 8, compresses the collection's vectors with Weaviate's 8-bit
	// rotational quantization: the graph is built and walked on the codes,
	// and the hits are rescored with the full vectors (0: no compression).
	RQ int
	// Timeout bounds one HTTP request when ctx has no earlier deadline
	// (default 30 s).
	Timeout time.Duration
	// HybridCandidates must equal the server's QUERY_HYBRID_MAXIMUM_RESULTS
	// (default 100); it bounds how far Search widens a hybrid request to
	// settle ties without changing the candidate pool that fusion sees.
	HybridCandidates int
	// K1 and B are the BM25 parameters set when the collection is created
	// (defaults 1.2 and 0.75, Weaviate's).
	K1, B float64
	// APIKey, when set, is sent as a bearer token on every REST/GraphQL and
	// gRPC call (Weaviate's API-key authentication). Never logged.
	APIKey string
	// Encoder is the version of the encoder that embeds the documents
	// (scoring.Encoder.Version). A collection created with it set records it
	// in its description, and one recording another encoder is refused.
	Encoder string
	// Create makes New create the collection (and tenant) when missing;
	// otherwise a missing one is an error (a mistyped name must not serve an
	// empty index).
	Create bool
}

// Store is one Weaviate collection (or one tenant of it). It is safe for
// concurrent use.
type Store struct {
	cfg    Config
	client *wv.Client
	rpc    *rpc // searches over gRPC; nil: over GraphQL
	// replicated: the collection keeps more than one copy of its shards,
	// so reads and writes name consistency levels (Weaviate's GraphQL has
	// no consistencyLevel argument on a collection without replication).
	replicated bool
}

var classRE = regexp.MustCompile(`^[A-Z][_0-9A-Za-z]*$`)

// ParseURL reads an index location:
//
//	weaviate://HOST:PORT/Class?tenant=T&grpc=GRPCPORT&batch=N
//	weaviate://HOST:PORT,HOST:PORT,.../Class?grpc=P1,P2,...  (a cluster's nodes)
//	weaviates://HOST:PORT/Class   (HTTPS)
//	http://HOST:PORT/Class        (the same as weaviate://)
//
// grpc may be a port (on each host) or host:port, or a comma-separated
// list with one per host; "grpc=off" imports over REST and searches over
// GraphQL. Without grpc, both use gRPC on port 50051 of each host. A host
// without a port has 8080 (443 for HTTPS); without a class, DefaultClass.
func ParseURL(raw string) (Config, error) {
	// url.Parse takes one host: the list is read apart.
	hostPart, oneHost := splitHostList(raw)
	u, err := url.Parse(oneHost)
	if err != nil {
		return Config{}, fmt.Errorf("weaviate url %q: %w", raw, err)
	}
	scheme := "http"
	switch u.Scheme {
	case "weaviate", "http":
	case "weaviates", "https":
		scheme = "https"
	default:
		return Config{}, fmt.Errorf("weaviate url %q: scheme must be weaviate://, weaviates://, http:// or https://", raw)
	}
	if u.Host == "" {
		return Config{}, fmt.Errorf("weaviate url %q: no host (want weaviate://HOST:PORT/Class)", raw)
	}
	hosts, err := parseHosts(raw, hostPart, map[string]string{"http": "8080", "https": "443"}[scheme])
	if err != nil {
		return Config{}, err
	}
	cfg := Config{URL: scheme + "://" + hosts[0], Class: strings.Trim(u.Path, "/")}
	if len(hosts) > 1 {
		cfg.Hosts = hostURLs(scheme, hosts)
	}
	if cfg.Class == "" {
		cfg.Class = DefaultClass
	}
	q := u.Query()
	for k := range q {
		switch k {
		case "tenant", "grpc", "batch", "efConstruction", "maxConnections", "rq":
		default:
			return Config{}, fmt.Errorf("weaviate url %q: unknown parameter %q (tenant, grpc, batch, efConstruction, maxConnections, rq)", raw, k)
		}
	}
	cfg.Tenant = q.Get("tenant")
	grpcHosts, err := parseGRPC(raw, q.Get("grpc"), hosts)
	if err != nil {
		return Config{}, err
	}
	if len(grpcHosts) > 0 {
		cfg.GRPC = grpcHosts[0]
		if len(grpcHosts) > 1 {
			cfg.GRPCHosts = grpcHosts
		}
	}
	if b := q.Get("batch"); b != "" {
		n, err := strconv.Atoi(b)
		if err != nil || n <= 0 {
			return Config{}, fmt.Errorf("weaviate url %q: batch=%q is not a positive integer", raw, b)
		}
		cfg.BatchSize = n
	}
	for name, dst := range map[string]*int{"efConstruction": &cfg.EfConstruction, "maxConnections": &cfg.MaxConnections, "rq": &cfg.RQ} {
		if v := q.Get(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return Config{}, fmt.Errorf("weaviate url %q: %s=%q is not a positive integer", raw, name, v)
			}
			*dst = n
		}
	}
	err = cfg.Validate()
	return cfg, err
}

// Validate checks the configuration and fills defaults.
func (c *Config) Validate() error {
	if c.URL == "" {
		return errors.New("weaviate: no URL")
	}
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("weaviate: URL %q must be http(s)://HOST:PORT", c.URL)
	}
	if c.Class == "" {
		c.Class = DefaultClass
	}
	if !classRE.MatchString(c.Class) {
		return fmt.Errorf("weaviate: class name %q must match %s", c.Class, classRE)
	}
	if c.Tenant != "" && !tenantRE.MatchString(c.Tenant) {
		return fmt.Errorf("weaviate: tenant name %q must match %s", c.Tenant, tenantRE)
	}
	if c.BatchSize == 0 {
		c.BatchSize = 256
	}
	if c.BatchSize < 0 {
		return fmt.Errorf("weaviate: batch size %d is negative", c.BatchSize)
	}
	if c.EfConstruction < 0 || c.MaxConnections < 0 {
		return fmt.Errorf("weaviate: efConstruction %d and maxConnections %d must not be negative", c.EfConstruction, c.MaxConnections)
	}
	if c.RQ != 0 && c.RQ != 8 {
		return fmt.Errorf("weaviate: rq=%d: the rotational quantization dmar offers is 8 bits (rq=8)", c.RQ)
	}
	if c.Timeout == 0 {
		c.Timeout = 30 * time.Second
	}
	if c.HybridCandidates == 0 {
		c.HybridCandidates = DefaultHybridCandidates
	}
	if c.K1 == 0 {
		c.K1 = 1.2
	}
	if c.B == 0 {
		c.B = 0.75
	}
	if len(c.Hosts) > 0 && c.Hosts[0] != c.URL {
		return fmt.Errorf("weaviate: the first host %q is not the URL %q", c.Hosts[0], c.URL)
	}
	if len(c.GRPCHosts) > 0 && c.GRPCHosts[0] != c.GRPC {
		return fmt.Errorf("weaviate: the first gRPC endpoint %q is not GRPC %q", c.GRPCHosts[0], c.GRPC)
	}
	return c.validateCluster()
}

var tenantRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Option adjusts the Config that Open and OpenOrCreate parse from a URL.
type Option func(*Config)

// WithAPIKey authenticates with a Weaviate API key (kept out of URLs, which
// end up in logs).
func WithAPIKey(key string) Option { return func(c *Config) { c.APIKey = key } }

// WithEncoder sets Config.Encoder: the collection records the encoder that
// embeds its documents and refuses another one.
func WithEncoder(version string) Option { return func(c *Config) { c.Encoder = version } }

// WithReplication sets how a collection New creates is sharded and
// replicated (Config.Shards, Config.Replicas) and the consistency levels of
// reads and writes ("" leaves the default: ONE and QUORUM).
func WithReplication(shards, replicas int, read, write string) Option {
	return func(c *Config) {
		c.Shards, c.Replicas = shards, replicas
		if read != "" {
			c.ReadConsistency = read
		}
		if write != "" {
			c.WriteConsistency = write
		}
	}
}

// Open connects to an existing collection (and tenant) at an index URL (see
// ParseURL), for searching: `dmar serve --index weaviate://...`.
func Open(ctx context.Context, rawURL string, opts ...Option) (*Store, error) {
	cfg, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	for _, o := range opts {
		o(&cfg)
	}
	return New(ctx, cfg)
}

// OpenOrCreate is Open that creates the collection (and tenant) when
// missing, for loading: `dmar load corpus --index weaviate://...`.
func OpenOrCreate(ctx context.Context, rawURL string, opts ...Option) (*Store, error) {
	return Open(ctx, rawURL, append(opts, func(c *Config) { c.Create = true })...)
}

// New connects with cfg and checks (or, with cfg.Create, makes) the
// collection and tenant. An unreachable server gives an errs.Unavailable
// error; a missing collection or tenant an errs.NotFound one.
func New(ctx context.Context, cfg Config) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	u, _ := url.Parse(cfg.URL)
	wc := wv.Config{Host: u.Host, Scheme: u.Scheme, Timeout: cfg.Timeout}
	if cfg.APIKey != "" {
		// The client adds these headers to REST and gRPC calls alike.
		wc.Headers = map[string]string{"Authorization": "Bearer " + cfg.APIKey}
	}
	if cfg.GRPC != "" {
		wc.GrpcConfig = &grpc.Config{Host: grpcTarget(cfg.grpcHosts()), Secured: u.Scheme == "https"}
	}
	hosts := cfg.hosts()
	if len(hosts) > 1 {
		wc.ConnectionClient = &http.Client{Timeout: cfg.Timeout, Transport: newHostPool(u.Scheme, hostsOf(hosts), nil)}
	}
	// Reach the server first: NewClient asks for its version with
	// context.Background and the client's timeout, which would ignore ctx.
	// Any node of a cluster will do.
	if err := pingAny(ctx, hosts, cfg.Timeout); err != nil {
		return nil, unavailable(ctx, "connect", err)
	}
	client, err := wv.NewClient(wc)
	if err != nil {
		return nil, unavailable(ctx, "connect", err)
	}
	s := &Store{cfg: cfg, client: client}
	if cfg.GRPC != "" {
		if s.rpc, err = newRPC(grpcTarget(cfg.grpcHosts()), u.Scheme == "https", cfg.APIKey); err != nil {
			return nil, err
		}
	}
	if err := s.ensureSchema(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the search connection.
func (s *Store) Close() error {
	if s.rpc == nil {
		return nil
	}
	return s.rpc.conn.Close()
}

// Config returns the store's configuration, defaults filled in.
func (s *Store) Config() Config { return s.cfg }

// Drop deletes the whole collection (all tenants). Tests and reloads use it.
func (s *Store) Drop(ctx context.Context) error {
	if err := s.client.Schema().ClassDeleter().WithClassName(s.cfg.Class).Do(ctx); err != nil {
		return unavailable(ctx, "drop collection "+s.cfg.Class, err)
	}
	return nil
}
