package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dmar-kg/dmar/internal/chat/chattest"
	"github.com/dmar-kg/dmar/internal/corpus/corpustest"
	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/memkg"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/reformulate"
	"github.com/dmar-kg/dmar/internal/retrieval/memindex"
	"github.com/dmar-kg/dmar/internal/scoring/scoringtest"
)

var (
	fixtureOnce sync.Once
	fixGraph    *memkg.Graph
	fixIndex    *memindex.Index
	fixErr      error
)

// film loads codexm-film once: the real KG and corpus, linked and embedded
// with the test double encoder.
func film(t *testing.T) (*memkg.Graph, *memindex.Index) {
	t.Helper()
	fixtureOnce.Do(func() {
		ctx := context.Background()
		var dir string
		if fixGraph, dir, fixErr = corpustest.Graph(ctx, "codexm-film"); fixErr == nil {
			_, fixIndex, fixErr = corpustest.Index(ctx, fixGraph, dir, scoringtest.Words{})
		}
	})
	if fixErr != nil {
		t.Fatal(fixErr)
	}
	return fixGraph, fixIndex
}

// retrieve is p's answer to q with o; an error fails the test.
func retrieve(t *testing.T, p *pipeline.Pipeline, q string, o pipeline.Options) *pipeline.Result {
	t.Helper()
	return answer(t, p.Retrieve, q, o)
}

// answer is a way in's answer (Retrieve, GraphWalk, TextWalk) to q with o;
// an error fails the test.
func answer(t *testing.T, way func(context.Context, string, pipeline.Options) (*pipeline.Result, error), q string, o pipeline.Options) *pipeline.Result {
	t.Helper()
	res, err := way(context.Background(), q, o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// answersAsRetrieve fails the test unless res, the answer of another way
// in (what), is p.Retrieve's to q with o, timings aside (res loses them).
func answersAsRetrieve(t *testing.T, p *pipeline.Pipeline, q string, o pipeline.Options, res *pipeline.Result, what string) {
	t.Helper()
	plain := retrieve(t, p, q, o)
	res.TimingsMS, plain.TimingsMS = nil, nil
	if !reflect.DeepEqual(res, plain) {
		t.Fatal(what + "'s answer differs from Retrieve's")
	}
}

func newPipeline(t *testing.T, mod func(*pipeline.Config)) *pipeline.Pipeline {
	g, x := film(t)
	cfg := pipeline.Config{Graph: g, Index: x, Encoder: scoringtest.Words{}, GNN: &hashGNN{}}
	if mod != nil {
		mod(&cfg)
	}
	p, err := pipeline.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

const nolan = "Which films did Christopher Nolan direct?"

func fallbackNames(r *pipeline.Result) []string {
	var out []string
	for _, f := range r.Fallbacks {
		out = append(out, f.Name)
	}
	return out
}

func hasFallback(r *pipeline.Result, name string) bool {
	for _, n := range fallbackNames(r) {
		if n == name {
			return true
		}
	}
	return false
}

func TestRetrieveShape(t *testing.T) {
	p := newPipeline(t, nil)
	res := retrieve(t, p, nolan, p.Defaults())
	if len(res.Results) != 5 {
		t.Fatalf("got %d results, want k=5", len(res.Results))
	}
	if len(res.Anchors) != 3 {
		t.Fatalf("got %d anchors, want m=3", len(res.Anchors))
	}
	if len(res.QueryEntities) != 1 || res.QueryEntities[0].QID != "Q25191" {
		t.Errorf("query entities = %+v, want Christopher Nolan (Q25191)", res.QueryEntities)
	}
	if len(res.QuerySubgraphs) != 1 || res.QuerySubgraphs[0].Root != "Q25191" || len(res.QuerySubgraphs[0].Nodes) < 2 {
		t.Errorf("query subgraphs = %d", len(res.QuerySubgraphs))
	}
	if res.ReformulatedQuery == "" || res.ReformulatedQuery == nolan || !strings.HasPrefix(res.ReformulatedQuery, nolan) {
		t.Errorf("reformulated query %q: want Q extended with KG terms", res.ReformulatedQuery)
	}
	if res.Reformulator != "builtin" {
		t.Errorf("reformulator = %q", res.Reformulator)
	}
	for i, a := range res.Anchors {
		if a.Rank != i+1 || len(a.Phi) != 1 || !a.PhiExact || a.Snippet == "" {
			t.Errorf("anchor %d = rank %d, %d phi, exact %v, snippet %q", i, a.Rank, len(a.Phi), a.PhiExact, a.Snippet)
		}
		// With one query subgraph, phi equals F(G_Q) = |G_Q| * ent.
		if len(a.Phi) == 1 && abs(a.Phi[0].Phi-a.Breakdown.Structural) > 1e-9 {
			t.Errorf("anchor %s: phi %v != ent %v for a single player", a.ID, a.Phi[0].Phi, a.Breakdown.Structural)
		}
		if len(a.Subgraphs) == 0 {
			t.Errorf("anchor %s has no subgraphs", a.ID)
		}
	}
	prev := res.Results[0].Score + 1
	for i, d := range res.Results {
		b := d.Breakdown
		if d.Rank != i+1 || d.Score > prev || b.Stage != "second" {
			t.Errorf("result %d: rank %d score %v stage %q", i, d.Rank, d.Score, b.Stage)
		}
		prev = d.Score
		want := b.Gate.Semantic*b.ZSemantic + b.Gate.Structural*b.ZStructural
		if abs(d.Score-want) > 1e-9 {
			t.Errorf("result %s: score %v != fused breakdown %v", d.ID, d.Score, want)
		}
		if abs(b.Gate.Semantic+b.Gate.Structural-1) > 1e-9 {
			t.Errorf("gate weights %+v do not sum to 1", b.Gate)
		}
	}
	for _, stage := range []string{"encode", "link", "recall", "subgraphs", "anchor_scoring", "reformulate", "second_stage", "rerank", "total"} {
		if _, ok := res.TimingsMS[stage]; !ok {
			t.Errorf("timings lack %q", stage)
		}
	}
	// No gate model configured: fixed weights, flagged.
	if !hasFallback(res, "gate_unavailable") {
		t.Errorf("fallbacks = %v, want gate_unavailable", fallbackNames(res))
	}
}

func TestRetrieveDeterministic(t *testing.T) {
	p := newPipeline(t, nil)
	for _, mode := range []string{"exact", "montecarlo"} {
		o := p.Defaults()
		o.Shapley, o.Seed = mode, 7
		a := retrieve(t, p, nolan, o)
		// A fresh pipeline (cold cache) must give the same answer.
		b, err := newPipeline(t, nil).Retrieve(context.Background(), nolan, o)
		if err != nil {
			t.Fatal(err)
		}
		a.TimingsMS, b.TimingsMS = nil, nil
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: same request, same seed, different answers", mode)
		}
	}
}

func TestMonteCarloModeDiffersOnlyByEstimate(t *testing.T) {
	p := newPipeline(t, nil)
	o := p.Defaults()
	exact := retrieve(t, p, "Inception cast Leonardo DiCaprio and Tom Hardy", o)
	o.Shapley, o.Samples = "montecarlo", 2000
	mc := retrieve(t, p, "Inception cast Leonardo DiCaprio and Tom Hardy", o)
	if len(exact.QuerySubgraphs) < 2 {
		t.Fatalf("want a query with several subgraphs, got %d", len(exact.QuerySubgraphs))
	}
	for i := range exact.Anchors {
		if i < len(mc.Anchors) && exact.Anchors[i].ID == mc.Anchors[i].ID {
			d := abs(exact.Anchors[i].Breakdown.Structural - mc.Anchors[i].Breakdown.Structural)
			if d > 0.02 {
				t.Errorf("anchor %s: Monte Carlo ent %v is %v from the exact %v", exact.Anchors[i].ID, mc.Anchors[i].Breakdown.Structural, d, exact.Anchors[i].Breakdown.Structural)
			}
		}
	}
}

func TestFallbackNoQueryEntities(t *testing.T) {
	p := newPipeline(t, nil)
	res := retrieve(t, p, "what happens when dreams collapse inside other dreams", p.Defaults())
	if len(res.QueryEntities) != 0 {
		t.Fatalf("query linked to %v; pick a text that links nothing", res.QueryEntities)
	}
	if !hasFallback(res, "no_query_entities") {
		t.Errorf("fallbacks = %v, want no_query_entities", fallbackNames(res))
	}
	for _, d := range append(res.Results, anchorsDocs(res)...) {
		if d.Breakdown.Gate.Semantic != 1 || d.Breakdown.Gate.Structural != 0 || d.Breakdown.Structural != 0 {
			t.Errorf("%s: gate %+v ent %v, want alpha=1, beta=0, ent=0", d.ID, d.Breakdown.Gate, d.Breakdown.Structural)
		}
	}
	if len(res.Results) != 5 {
		t.Errorf("fallback must still return k results, got %d", len(res.Results))
	}
}

func anchorsDocs(r *pipeline.Result) []pipeline.Doc {
	var out []pipeline.Doc
	for _, a := range r.Anchors {
		out = append(out, a.Doc)
	}
	return out
}

func TestReformulators(t *testing.T) {
	// A chat endpoint that thinks aloud first.
	srv := chattest.New(t, "<think>hmm, Nolan directed films</think>\nChristopher Nolan director filmography Inception Interstellar")
	dead := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	deadURL := dead.URL
	dead.Close() // unreachable from now on

	cases := []struct {
		name, reform string
		chat         pipeline.Reformulator
		wantQ        string // exact Q' when set
		wantBy       string
		wantFallback string
	}{
		{name: "none", reform: "none", wantQ: nolan, wantBy: "none"},
		{name: "builtin", reform: "builtin", wantBy: "builtin"},
		{name: "chat", reform: "chat", chat: reformulate.Chat{BaseURL: srv.URL + "/v1", Model: "m", Timeout: 5 * time.Second},
			wantQ: "Christopher Nolan director filmography Inception Interstellar", wantBy: "chat"},
		{name: "chat unreachable", reform: "chat", chat: reformulate.Chat{BaseURL: deadURL + "/v1", Model: "m", Timeout: 2 * time.Second},
			wantBy: "builtin", wantFallback: "reformulator_chat_failed"},
		{name: "chat unconfigured", reform: "chat", wantBy: "builtin", wantFallback: "reformulator_chat_unavailable"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newPipeline(t, func(cfg *pipeline.Config) {
				if c.chat != nil {
					cfg.Chat = c.chat
				}
			})
			o := p.Defaults()
			o.Reformulator = c.reform
			res := retrieve(t, p, nolan, o)
			if res.Reformulator != c.wantBy {
				t.Errorf("reformulator = %q, want %q", res.Reformulator, c.wantBy)
			}
			if c.wantQ != "" && res.ReformulatedQuery != c.wantQ {
				t.Errorf("Q' = %q, want %q", res.ReformulatedQuery, c.wantQ)
			}
			if c.wantFallback != "" && !hasFallback(res, c.wantFallback) {
				t.Errorf("fallbacks = %v, want %s", fallbackNames(res), c.wantFallback)
			}
			if c.wantBy == "builtin" && (res.ReformulatedQuery == nolan || !strings.HasPrefix(res.ReformulatedQuery, nolan)) {
				t.Errorf("builtin Q' = %q", res.ReformulatedQuery)
			}
		})
	}
	if gotPrompt := srv.Last().Body; !strings.Contains(gotPrompt, "[Original Query: "+nolan+"]") || !strings.Contains(gotPrompt, "[Evidence 1: ") || !strings.Contains(gotPrompt, "Reformulate:") {
		t.Errorf("chat prompt lacks the paper's format: %s", gotPrompt)
	}
}

// downGraph fails every call, as an unreachable Neo4j would.
type downGraph struct{ kg.Graph }

var errDown = errs.Unavail(errors.New("connection refused"), "neo4j")

func (downGraph) Link(context.Context, string) ([]kg.Mention, error) { return nil, errDown }
func (downGraph) Subgraphs(context.Context, []string, kg.SubgraphParams) (map[string]kg.Subgraph, error) {
	return nil, errDown
}
func (downGraph) Entities(context.Context, []string) (map[string]kg.Entity, error) {
	return nil, errDown
}

func TestGraphDownDegrades(t *testing.T) {
	p := newPipeline(t, func(c *pipeline.Config) { c.Graph = downGraph{c.Graph} })
	res, err := p.Retrieve(context.Background(), nolan, p.Defaults())
	if err != nil {
		t.Fatalf("a graph outage must degrade, not fail: %v", err)
	}
	if !hasFallback(res, "graph_unavailable") || len(res.Results) != 5 {
		t.Errorf("fallbacks %v, %d results", fallbackNames(res), len(res.Results))
	}
}

func TestGNNEncodesOncePerSubgraph(t *testing.T) {
	gnn := &hashGNN{}
	p := newPipeline(t, func(c *pipeline.Config) { c.GNN = gnn })
	retrieve(t, p, nolan, p.Defaults())
	// One batched call for the stage-1 subgraphs, at most one for the new
	// stage-2 ones.
	if gnn.calls < 1 || gnn.calls > 2 {
		t.Errorf("GNN called %d times for one request, want 1-2 batched calls", gnn.calls)
	}
	servedFromCache(t, p, gnn, "a repeated request")
}

// servedFromCache fails the test when a request (what) with p's defaults
// has gnn encode subgraphs: the cache should serve them all.
func servedFromCache(t *testing.T, p *pipeline.Pipeline, gnn *hashGNN, what string) {
	t.Helper()
	before := gnn.calls
	retrieve(t, p, nolan, p.Defaults())
	if gnn.calls != before {
		t.Errorf("%s encoded subgraphs (%d calls); the cache should serve them", what, gnn.calls-before)
	}
}

func TestOptionErrors(t *testing.T) {
	p := newPipeline(t, nil)
	long := strings.Repeat("a", pipeline.MaxQueryChars+1)
	cases := []struct {
		query string
		mod   func(*pipeline.Options)
		code  errs.Code
		field string
	}{
		{"", nil, errs.Invalid, "query"},
		{long, nil, errs.TooLarge, "query"},
		{nolan, func(o *pipeline.Options) { o.K = 30 }, errs.Unprocessable, "k"},
		{nolan, func(o *pipeline.Options) { o.Lambda = 1.5 }, errs.Invalid, "lambda"},
		{nolan, func(o *pipeline.Options) { o.Shapley = "approx" }, errs.Invalid, "shapley"},
		{nolan, func(o *pipeline.Options) { o.N = 0 }, errs.Invalid, "n"},
		{nolan, func(o *pipeline.Options) { o.Hops = 4 }, errs.Invalid, "hops"},
		{nolan, func(o *pipeline.Options) { o.MaxNodes = 513 }, errs.Invalid, "max_nodes"},
		{nolan, func(o *pipeline.Options) { o.HubDegree = 0 }, errs.Invalid, "hub_degree"},
	}
	for _, c := range cases {
		o := p.Defaults()
		if c.mod != nil {
			c.mod(&o)
		}
		_, err := p.Retrieve(context.Background(), c.query, o)
		e, ok := errs.As(err)
		if !ok || e.Code != c.code || e.Field != c.field || !strings.Contains(e.Message, c.field) {
			t.Errorf("query %.20q: error %v, want code %s naming %q", c.query, err, c.code, c.field)
		}
	}
}

func TestContextDeadline(t *testing.T) {
	p := newPipeline(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Retrieve(ctx, nolan, p.Defaults()); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled request: %v", err)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func TestWarmFillsTheCache(t *testing.T) {
	gnn := &hashGNN{}
	p := newPipeline(t, func(c *pipeline.Config) { c.GNN = gnn })
	g, _ := film(t)
	var roots []string
	for _, e := range g.AllEntities() {
		roots = append(roots, e.QID)
	}
	n, err := p.Warm(context.Background(), roots, p.Defaults())
	if err != nil || n != len(roots) {
		t.Fatalf("Warm = %d, %v; want %d", n, err, len(roots))
	}
	servedFromCache(t, p, gnn, "a request after Warm")
}

func TestCandidates(t *testing.T) {
	p := newPipeline(t, nil)
	docs, res, err := p.Candidates(context.Background(), nolan, p.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	full := retrieve(t, p, nolan, p.Defaults())
	if len(docs) < full.Options.M || len(res.QueryEntities) != 1 {
		t.Fatalf("%d candidates, %d query entities", len(docs), len(res.QueryEntities))
	}
	// The anchors are the top-m of exactly these scores.
	byID := map[string]pipeline.Doc{}
	for _, d := range docs {
		byID[d.ID] = d
	}
	for _, a := range full.Anchors {
		d, ok := byID[a.ID]
		if !ok || abs(d.Score-a.Score) > 1e-12 || d.Breakdown.ZStructural != a.Breakdown.ZStructural {
			t.Errorf("anchor %s: candidate %+v, anchor score %v", a.ID, d.Breakdown, a.Score)
		}
	}
}

func TestLinkIsTheRetrievalsLinking(t *testing.T) {
	p := newPipeline(t, nil)
	ms, err := p.Link(context.Background(), nolan)
	if err != nil {
		t.Fatal(err)
	}
	res := retrieve(t, p, nolan, p.Defaults())
	if len(ms) != 1 || ms[0].Label == "" || !reflect.DeepEqual(ms, res.QueryEntities) {
		t.Errorf("Link = %+v, the retrieval's query entities = %+v", ms, res.QueryEntities)
	}
	if _, err := newPipeline(t, func(c *pipeline.Config) { c.Graph = downGraph{c.Graph} }).Link(context.Background(), nolan); !errors.Is(err, errDown) {
		t.Errorf("Link on a graph outage: %v, want the graph's error", err)
	}
}

func TestValidateSubgraphBounds(t *testing.T) {
	ok := kg.SubgraphParams{Hops: pipeline.HopsRange.Max, MaxNodes: pipeline.MaxNodesRange.Max, HubDegree: pipeline.HubDegreeRange.Min}
	if err := pipeline.ValidateSubgraph(ok); err != nil {
		t.Errorf("%+v at the bounds: %v", ok, err)
	}
	for field, p := range map[string]kg.SubgraphParams{
		"hops":       {Hops: pipeline.HopsRange.Max + 1, MaxNodes: 1, HubDegree: 1},
		"max_nodes":  {Hops: 1, MaxNodes: pipeline.MaxNodesRange.Min - 1, HubDegree: 1},
		"hub_degree": {Hops: 1, MaxNodes: 1, HubDegree: pipeline.HubDegreeRange.Max + 1},
	} {
		e, isE := errs.As(pipeline.ValidateSubgraph(p))
		if !isE || e.Code != errs.Invalid || e.Field != field {
			t.Errorf("%+v: %v, want an invalid %s", p, e, field)
		}
	}
}

// A request whose structural work cannot fit the configured budget is refused
// with 422 naming samples, before any scoring; one that fits runs.
func TestStructuralBudget(t *testing.T) {
	const q = "Inception cast Leonardo DiCaprio and Tom Hardy"
	p := newPipeline(t, func(c *pipeline.Config) { c.MaxShapleyEvaluations = 1_000_000 })
	o := p.Defaults()
	o.Shapley, o.Samples = "montecarlo", 10_000
	_, err := p.Retrieve(context.Background(), q, o)
	e, ok := errs.As(err)
	if !ok || e.Code != errs.Unprocessable || e.Field != "samples" || !strings.Contains(e.Message, "limit of 1000000") {
		t.Fatalf("over budget: %v, want 422 unprocessable naming samples and the limit", err)
	}
	o.Samples = 50
	if _, err := p.Retrieve(context.Background(), q, o); err != nil {
		t.Fatalf("within budget: %v", err)
	}
}

// The deadline ends a Monte Carlo request that would run for seconds with
// the request's deadline error (the server's 503), not with a result. The
// wall-clock bound is tested against the real server (cmd/dmar).
func TestMonteCarloHonoursTheDeadline(t *testing.T) {
	const q = "Inception cast Leonardo DiCaprio and Tom Hardy"
	p := newPipeline(t, func(c *pipeline.Config) { c.MaxShapleyEvaluations = 1 << 40 })
	o := p.Defaults()
	o.Shapley, o.Samples = "montecarlo", 10_000
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := p.Retrieve(ctx, q, o); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the deadline", err)
	}
}

// A bad enum value is echoed cut to errs.MaxEcho characters, never whole.
func TestOptionErrorsClipTheValue(t *testing.T) {
	o := pipeline.Defaults()
	o.Shapley = strings.Repeat("x", 100_000)
	err := o.Validate()
	if err == nil || len(err.Error()) > 300 || !strings.Contains(err.Error(), "…") {
		t.Fatalf("error of %d bytes: %.120v", len(fmt.Sprint(err)), err)
	}
}

// linksButDown links (the graph was up when Q was linked) and then fails
// every other call, as a Neo4j that dies mid-request would.
type linksButDown struct{ kg.Graph }

func (linksButDown) Subgraphs(context.Context, []string, kg.SubgraphParams) (map[string]kg.Subgraph, error) {
	return nil, errDown
}
func (linksButDown) Entities(context.Context, []string) (map[string]kg.Entity, error) {
	return nil, errDown
}

// The question-aware method reports a graph outage as graph_unavailable
// too: its graph channel is where the first failing call is, and with
// structure_needs_channel no later graph call is made that would say so.
func TestGraphDownDegradesQuestionAware(t *testing.T) {
	for name, g := range map[string]func(kg.Graph) kg.Graph{
		"down":            func(g kg.Graph) kg.Graph { return downGraph{g} },
		"down after link": func(g kg.Graph) kg.Graph { return linksButDown{g} },
	} {
		p := newPipeline(t, func(c *pipeline.Config) { c.Graph = g(c.Graph) })
		res, err := p.Retrieve(context.Background(), nolan, p.Defaults().QuestionAware())
		if err != nil {
			t.Fatalf("%s: a graph outage must degrade, not fail: %v", name, err)
		}
		if !hasFallback(res, "graph_unavailable") || len(res.Results) != 5 {
			t.Errorf("%s: fallbacks %v, %d results", name, fallbackNames(res), len(res.Results))
		}
	}
}

// The text graph channel's options are range-checked like every other:
// a weight outside [0, 100] or a document count outside [1, 500] is
// refused, naming the field (they were once accepted and echoed back).
func TestValidateTextOptions(t *testing.T) {
	for field, set := range map[string]func(*pipeline.Options){
		"text_graph":   func(o *pipeline.Options) { o.TextGraph = 101 },
		"text_graph_k": func(o *pipeline.Options) { o.TextGraphK = 0 },
	} {
		o := pipeline.Defaults()
		if err := o.Validate(); err != nil {
			t.Fatalf("defaults: %v", err)
		}
		set(&o)
		e, ok := errs.As(o.Validate())
		if !ok || e.Code != errs.Invalid || e.Field != field {
			t.Errorf("%s out of range: %v, want an invalid %s", field, e, field)
		}
	}
	o := pipeline.Defaults()
	o.TextGraph = -1
	if e, ok := errs.As(o.Validate()); !ok || e.Field != "text_graph" {
		t.Errorf("text_graph -1: %v", e)
	}
}

// The result names what each source proposed before fusion (dmar eval's
// miss analysis): the stage-1 pool is the search's own n hits, and every
// ranked result was proposed by some source.
func TestResultNamesEachSourcesCandidates(t *testing.T) {
	p := newPipeline(t, nil)
	opts := p.Defaults().QuestionAware()
	res := retrieve(t, p, nolan, opts)
	recall := res.Candidates["recall"]
	if len(recall) == 0 || len(recall) > opts.N {
		t.Fatalf("recall candidates %d, want 1..n=%d", len(recall), opts.N)
	}
	if _, ok := res.Candidates["kg"]; !ok {
		t.Errorf("no kg candidates recorded with the graph channel on: %v", res.Candidates)
	}
	proposed := map[string]bool{}
	for _, ids := range res.Candidates {
		for _, id := range ids {
			proposed[id] = true
		}
	}
	for _, d := range res.Results {
		if !proposed[d.ID] {
			t.Errorf("result %s was proposed by no source (%v)", d.ID, res.Candidates)
		}
	}
}
