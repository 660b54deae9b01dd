package weaviate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/retrieval/memindex"
	"github.com/google/go-cmp/cmp"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/fault"
	"github.com/weaviate/weaviate/entities/models"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestParseURL(t *testing.T) {
	tests := []struct {
		in   string
		want Config
		err  string
	}{
		{in: "weaviate://127.0.0.1:8080/Codexm", want: Config{URL: "http://127.0.0.1:8080", Class: "Codexm", GRPC: "127.0.0.1:50051"}},
		{in: "weaviate://localhost", want: Config{URL: "http://localhost:8080", Class: DefaultClass, GRPC: "localhost:50051"}},
		{in: "http://h:9000/Docs?grpc=off", want: Config{URL: "http://h:9000", Class: "Docs"}},
		{in: "weaviates://h/Docs?grpc=443&tenant=app-1", want: Config{URL: "https://h:443", Class: "Docs", GRPC: "h:443", Tenant: "app-1"}},
		{in: "weaviate://h:1/Docs?grpc=other:7&batch=64", want: Config{URL: "http://h:1", Class: "Docs", GRPC: "other:7", BatchSize: 64}},
		{in: "weaviate://h:1/Docs?efConstruction=64&maxConnections=16", want: Config{URL: "http://h:1", Class: "Docs", GRPC: "h:50051", EfConstruction: 64, MaxConnections: 16}},
		{in: "weaviate://h:1/Docs?rq=8", want: Config{URL: "http://h:1", Class: "Docs", GRPC: "h:50051", RQ: 8}},
		{in: "weaviate://h/Docs?rq=4", err: "rq=4"},
		{in: "weaviate://h/Docs?efConstruction=-1", err: "efConstruction"},
		{in: "weaviate://h/Docs?maxConnections=many", err: "maxConnections"},
		{in: "bolt://h:1/Docs", err: "scheme"},
		{in: "weaviate:///Docs", err: "no host"},
		{in: "weaviate://h/docs", err: "class name"},
		{in: "weaviate://h/Docs?tenant=a/b", err: "tenant name"},
		{in: "weaviate://h/Docs?batch=0", err: "batch"},
		{in: "weaviate://h/Docs?grpc=x", err: "grpc"},
		{in: "weaviate://h/Docs?limit=3", err: "unknown parameter"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseURL(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("ParseURL(%q) error = %v, want one mentioning %q", tt.in, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			if err := want.Validate(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("ParseURL(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestObjectIDDeterministic(t *testing.T) {
	a, b := ObjectID("Q25188"), ObjectID("Q25188")
	if a != b {
		t.Fatalf("ObjectID not deterministic: %s vs %s", a, b)
	}
	if ObjectID("Q25191") == a {
		t.Fatal("different documents share an object id")
	}
	// Version 5 (SHA-1, name based), RFC 4122 variant.
	if s := string(a); s[14] != '5' || !strings.ContainsRune("89ab", rune(s[19])) {
		t.Fatalf("ObjectID %s is not a UUIDv5", a)
	}
}

func TestPrintable(t *testing.T) {
	tests := []struct{ in, want string }{
		{"who directed Inception?", "who directed Inception?"},
		{"tab\there\nnewline", "tab here newline"},
		{"bell\a and \x00nul", "bell  and  nul"},
		{"bad \xff utf8", "bad   utf8"},
		{"Zoë's café — “quoted”", "Zoë's café — “quoted”"},
		{"nbsp\u00a0emoji😀", "nbsp emoji😀"},
	}
	for _, tt := range tests {
		if got := printable(tt.in); got != tt.want {
			t.Errorf("printable(%q) = %q, want %q", tt.in, got, tt.want)
		}
		// What the client's %q makes of it must be valid GraphQL: no \x, \a,
		// \v or \U escapes.
		if q := strconv.Quote(printable(tt.in)); regexp.MustCompile(`\\[xavU]`).MatchString(q) {
			t.Errorf("quoted %s has escapes GraphQL does not know", q)
		}
	}
}

func TestCleanFilter(t *testing.T) {
	tests := []struct {
		in   retrieval.Filter
		want retrieval.Filter
		none bool
	}{
		{in: retrieval.Filter{}, want: retrieval.Filter{}},
		{in: retrieval.Filter{IDs: []string{"Q1", "bad\x00", ""}}, want: retrieval.Filter{IDs: []string{"Q1"}}},
		{in: retrieval.Filter{IDs: []string{"bad\x00"}}, none: true},
		{in: retrieval.Filter{IDs: []string{"Q1"}, AnyEntities: []string{"\t"}}, want: retrieval.Filter{IDs: []string{"Q1"}}, none: true},
	}
	for i, tt := range tests {
		got, none := cleanFilter(tt.in)
		if none != tt.none || (!none && !cmp.Equal(tt.want, got)) {
			t.Errorf("%d: cleanFilter(%+v) = %+v, %v; want %+v, %v", i, tt.in, got, none, tt.want, tt.none)
		}
	}
}

func TestCheckDoc(t *testing.T) {
	nan := float32(0)
	nan /= nan
	tests := []struct {
		d   retrieval.Document
		err string
	}{
		{d: retrieval.Document{ID: "Q1", Title: "t", Entities: []string{"Q2"}, Vector: []float32{1, 0}}},
		{d: retrieval.Document{ID: " "}, err: "empty id"},
		{d: retrieval.Document{ID: "Q\n1"}, err: "unprintable"},
		{d: retrieval.Document{ID: "Q1", Entities: []string{""}}, err: "entity"},
		{d: retrieval.Document{ID: "Q1", Vector: []float32{1, nan}}, err: "component 1"},
		{d: retrieval.Document{ID: "Q1", Vector: []float32{1, 0, 0}}, err: "3 dimensions, the other documents 2"},
		{d: retrieval.Document{ID: "Q1", Title: "no vector"}},
	}
	for _, tt := range tests {
		err := checkDoc(tt.d, 2)
		if (tt.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("checkDoc(%+v) = %v, want %q", tt.d, err, tt.err)
		}
	}
}

// fakeWeaviate answers just enough of Weaviate's REST and GraphQL API for
// New and Search; graphql decides the answer to each GraphQL query.
func fakeWeaviate(t *testing.T, graphql func(w http.ResponseWriter, query string)) *httptest.Server {
	t.Helper()
	cls, err := json.Marshal(classDef(Config{Class: "Docs"}))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/.well-known/ready":
		case "/v1/meta":
			fmt.Fprint(w, `{"version":"1.35.2"}`)
		case "/v1/schema/Docs":
			w.Write(cls)
		case "/v1/graphql":
			var body struct{ Query string }
			b, _ := io.ReadAll(r.Body)
			if err := json.Unmarshal(b, &body); err != nil {
				t.Error(err)
			}
			graphql(w, body.Query)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func newFake(t *testing.T, srv *httptest.Server) *Store {
	t.Helper()
	s, err := New(context.Background(), Config{URL: srv.URL, Class: "Docs", Timeout: 5 * time.Second, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSearchFailuresAreUnavailable(t *testing.T) {
	tests := []struct {
		name   string
		answer func(w http.ResponseWriter, q string)
	}{
		{"status 500", func(w http.ResponseWriter, _ string) { http.Error(w, "boom", http.StatusInternalServerError) }},
		{"status 503", func(w http.ResponseWriter, _ string) { http.Error(w, "starting", http.StatusServiceUnavailable) }},
		// GraphQL errors come with status 200 and no transport error.
		{"graphql error", func(w http.ResponseWriter, _ string) {
			fmt.Fprint(w, `{"data":{"Get":{"Docs":null}},"errors":[{"message":"shard not ready"}]}`)
		}},
		{"garbage", func(w http.ResponseWriter, _ string) { fmt.Fprint(w, `<html>`) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newFake(t, fakeWeaviate(t, tt.answer))
			_, err := s.Search(context.Background(), retrieval.Query{Mode: retrieval.BM25, Text: "x", Limit: 3})
			if errs.CodeOf(err) != errs.Unavailable {
				t.Fatalf("Search error = %v (code %s), want %s", err, errs.CodeOf(err), errs.Unavailable)
			}
			if e, _ := errs.As(err); e.RetryAfter <= 0 {
				t.Errorf("no Retry-After on %v", err)
			}
			if _, err := s.Count(context.Background()); errs.CodeOf(err) != errs.Unavailable {
				t.Errorf("Count error = %v, want unavailable", err)
			}
		})
	}
}

func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	_, err = New(context.Background(), Config{URL: "http://" + addr, Class: "Docs", Timeout: time.Second})
	if errs.CodeOf(err) != errs.Unavailable {
		t.Fatalf("New on a closed port: %v (code %s), want unavailable", err, errs.CodeOf(err))
	}
	if got := errs.Status(errs.CodeOf(err)); got != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503", got)
	}
}

func TestSearchHonoursContext(t *testing.T) {
	release := make(chan struct{})
	s := newFake(t, fakeWeaviate(t, func(http.ResponseWriter, string) { <-release }))
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := s.Search(ctx, retrieval.Query{Mode: retrieval.BM25, Text: "x", Limit: 3})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Search error = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Search took %v after a 100ms deadline", d)
	}
}

func TestSearchRejectsBadQueries(t *testing.T) {
	var calls atomic.Int32
	s := newFake(t, fakeWeaviate(t, func(http.ResponseWriter, string) { calls.Add(1) }))
	nan := float32(0)
	nan /= nan
	for _, q := range []retrieval.Query{
		{Mode: retrieval.BM25, Limit: 3},
		{Mode: "sparse", Text: "x", Limit: 3},
		{Mode: retrieval.Vector, Vector: []float32{nan}, Limit: 3},
		{Mode: retrieval.Hybrid, Text: "x", Vector: []float32{1}, Alpha: 0.5, Fusion: "max", Limit: 3},
		{Mode: retrieval.BM25, Text: "x", Limit: maxResults + 1},
	} {
		if _, err := s.Search(context.Background(), q); errs.CodeOf(err) != errs.Invalid {
			t.Errorf("Search(%+v) error = %v, want invalid_argument", q, err)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("%d bad queries reached Weaviate", n)
	}
}

// TestTiesByID checks the port's contract on a server that returns equal
// scores in an order of its own, including a run of ties across the limit.
func TestTiesByID(t *testing.T) {
	limitRE := regexp.MustCompile(`limit: (\d+)`)
	var limits []int
	s := newFake(t, fakeWeaviate(t, func(w http.ResponseWriter, q string) {
		n, _ := strconv.Atoi(limitRE.FindStringSubmatch(q)[1])
		limits = append(limits, n)
		// 12 documents, Q12..Q1: Q12 scores 2, all others 1.
		var objs []string
		for i := 12; i >= 1 && len(objs) < n; i-- {
			score := "1"
			if i == 12 {
				score = "2"
			}
			objs = append(objs, fmt.Sprintf(`{"docId":"Q%02d","title":"","text":"","entities":null,"_additional":{"id":"x","score":%q,"explainScore":""}}`, i, score))
		}
		fmt.Fprintf(w, `{"data":{"Get":{"Docs":[%s]}}}`, strings.Join(objs, ","))
	}))
	hits, err := s.Search(context.Background(), retrieval.Query{Mode: retrieval.BM25, Text: "x", Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hits {
		got = append(got, h.Doc.ID)
	}
	if want := []string{"Q12", "Q01", "Q02"}; !cmp.Equal(want, got) {
		t.Errorf("hits %v, want %v", got, want)
	}
	// 3+8 = 11 hits all tied at the cut: it must have asked again for more.
	if want := []int{11, 22}; !cmp.Equal(want, limits) {
		t.Errorf("limits asked %v, want %v", limits, want)
	}
}

// The embedded index's copy of Weaviate's candidate cut assumes our slack.
func TestTieSlackMatchesMemindex(t *testing.T) {
	if tieSlack != memindex.WeaviateTieSlack {
		t.Fatalf("tieSlack %d != memindex.WeaviateTieSlack %d", tieSlack, memindex.WeaviateTieSlack)
	}
}

func TestCheckClass(t *testing.T) {
	mod := func(f func(c *models.Class)) *models.Class {
		c := classDef(Config{Class: "Docs"})
		// As read back from the server: the vector index config is a JSON map.
		c.VectorIndexConfig = map[string]any{"distance": "cosine"}
		f(c)
		return c
	}
	tests := []struct {
		name   string
		cls    *models.Class
		tenant string
		err    string
	}{
		{"ours", mod(func(*models.Class) {}), "", ""},
		{"dot distance", mod(func(c *models.Class) { c.VectorIndexConfig = map[string]any{"distance": "dot"} }), "", "cosine"},
		{"lowercase tokens", mod(func(c *models.Class) { c.Properties[2].Tokenization = "lowercase" }), "", `"word"`},
		{"no entities", mod(func(c *models.Class) { c.Properties = c.Properties[:3] }), "", "lacks properties [entities]"},
		{"tenant asked, single", mod(func(*models.Class) {}), "a", "not multi-tenant"},
		{"multi-tenant, none asked", mod(func(c *models.Class) { c.MultiTenancyConfig.Enabled = true }), "", "name a tenant"},
		{"same encoder", mod(func(c *models.Class) { c.Description = classDef(Config{Class: "Docs", Encoder: "enc-a"}).Description }), "", ""},
		{"other encoder", mod(func(c *models.Class) { c.Description = classDef(Config{Class: "Docs", Encoder: "enc-b"}).Description }), "", "loaded with encoder enc-b, not the configured enc-a"},
	}
	for _, tt := range tests {
		err := checkClass(tt.cls, Config{Class: "Docs", Tenant: tt.tenant, Encoder: "enc-a"})
		if (tt.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("%s: checkClass = %v, want %q", tt.name, err, tt.err)
		}
	}
}

func TestAPIKeySent(t *testing.T) {
	var auth atomic.Value
	srv := fakeWeaviate(t, func(w http.ResponseWriter, _ string) {
		fmt.Fprint(w, `{"data":{"Get":{"Docs":[]}}}`)
	})
	// Wrap the fake to record the Authorization header of GraphQL calls.
	inner := srv.Config.Handler
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/graphql" {
			auth.Store(r.Header.Get("Authorization"))
		}
		inner.ServeHTTP(w, r)
	})
	u := strings.Replace(srv.URL, "http://", "weaviate://", 1) + "/Docs?grpc=off"
	s, err := Open(context.Background(), u, WithAPIKey("s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Search(context.Background(), retrieval.Query{Mode: retrieval.BM25, Text: "x", Limit: 1}); err != nil {
		t.Fatal(err)
	}
	if got, _ := auth.Load().(string); got != "Bearer s3cret" {
		t.Errorf("Authorization = %q, want the API key as a bearer token", got)
	}
}

func TestTransient(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"refused (REST)", &fault.WeaviateClientError{DerivedFromError: &url.Error{Op: "Post", URL: "x", Err: refused}}, true},
		{"503", &fault.WeaviateClientError{IsUnexpectedStatusCode: true, StatusCode: 503}, true},
		{"429", &fault.WeaviateClientError{IsUnexpectedStatusCode: true, StatusCode: 429}, true},
		{"422", &fault.WeaviateClientError{IsUnexpectedStatusCode: true, StatusCode: 422}, false},
		{"bad JSON", &fault.WeaviateClientError{DerivedFromError: errors.New("invalid character")}, false},
		{"gRPC unavailable", fmt.Errorf("batch objects: %w", status.Error(codes.Unavailable, "down")), true},
		{"gRPC invalid", fmt.Errorf("batch objects: %w", status.Error(codes.InvalidArgument, "bad")), false},
		{"cancelled", fmt.Errorf("x: %w", context.Canceled), false},
		{"other", errors.New("something"), false},
	}
	for _, tt := range tests {
		if got := transient(tt.err); got != tt.want {
			t.Errorf("%s: transient = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// A cluster's search is sent again when its node is gone or has come back
// without the collection's schema yet; never for a request that is wrong,
// nor for a collection missing on every node (the retries then fail alike).
func TestRejoining(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{status.Error(codes.Unavailable, "connection refused"), true},
		{status.Error(codes.Unknown, "could not find class DmarFailover in schema"), true},
		{status.Error(codes.Unknown, "explorer: something else"), false},
		{status.Error(codes.InvalidArgument, "could not find class X in schema"), false},
		{errors.New("could not find class X in schema"), false},
	} {
		if got := rejoining(c.err); got != c.want {
			t.Errorf("rejoining(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestRetryStopsOnPermanentErrors(t *testing.T) {
	calls := 0
	err := retry(context.Background(), 5, func() error {
		calls++
		if calls < 3 {
			return &fault.WeaviateClientError{IsUnexpectedStatusCode: true, StatusCode: 503}
		}
		return &fault.WeaviateClientError{IsUnexpectedStatusCode: true, StatusCode: 422}
	})
	if calls != 3 || !isStatus(err, 422) {
		t.Fatalf("calls %d, err %v: want 2 retries on 503, then stop at 422", calls, err)
	}
}
