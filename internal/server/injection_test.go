package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/dmar-kg/dmar/internal/kg/neo4jkg"
	"github.com/dmar-kg/dmar/internal/kg/neo4jkg/neo4jtest"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/retrieval/weaviate"
	"github.com/dmar-kg/dmar/internal/server"
)

const marker = "dmarInjectionMarker"

// pwnedFile is where a shell injection would leave its mark.
var pwnedFile = filepath.Join(os.TempDir(), "dmar-injection-"+marker)

// injections try to escape into Cypher, a Weaviate GraphQL filter or a shell.
var injections = []string{
	// Cypher
	`"}) MATCH (n) DETACH DELETE n //`,
	`' OR 1=1 WITH 1 AS x MATCH (n) DETACH DELETE n //`,
	`Inception"}) CREATE (:Pwned {m: "` + marker + `"}) RETURN 1 //`,
	"`) CALL dbms.killQueries([]) //",
	`\u0022}) MERGE (:Pwned {m:'` + marker + `'})`,
	`$roots] MATCH (n) SET n.` + marker + ` = 1 //`,
	// Weaviate GraphQL and filters
	`") { Get { Document { id } } } #`,
	`Inception", operator: Like, path: ["id"], valueText: "*"}) { id } } mutation { delete }`,
	`}}} { Aggregate { Document { meta { count } } } }`,
	`*`, `%`, `' OR ''='`,
	// Shell
	`$(touch ` + pwnedFile + `)`,
	"`touch " + pwnedFile + "`",
	`; touch ` + pwnedFile + ` #`,
	`| touch ` + pwnedFile,
	`&& rm -rf / --no-preserve-root`,
	// Odd bytes
	"Q42\x00 DETACH DELETE", "\u202eQ42", strings.Repeat("(", 1000), `{{7*7}}`, `../../../../etc/passwd`,
}

// retrieveStringFields are the retrieve request's fields that take text;
// numeric and boolean fields get the payload as a JSON string (a type error).
var retrieveStringFields = []string{"query", "shapley", "stage1", "stage2", "fusion", "reformulator", "gate", "structure"}
var retrieveOtherFields = []string{"n", "m", "p", "k", "hops", "max_nodes", "hub_degree", "lambda", "samples", "seed",
	"stage1_alpha", "stage2_alpha", "fixed_alpha", "snippet_chars", "max_anchor_subgraphs", "persist"}

// attack sends every payload through every field of every route and fails
// on any status outside 200/4xx.
func attack(t *testing.T, h http.Handler) (sent int) {
	t.Helper()
	check := func(what string, code int, body string) {
		sent++
		if code >= 500 || (code != 200 && code < 400) {
			t.Errorf("%s: status %d %s", what, code, body)
		}
	}
	for _, inj := range injections {
		js, _ := json.Marshal(inj)
		var bodies []string
		for _, f := range retrieveStringFields {
			q := `"Inception"`
			if f == "query" {
				q = string(js)
			}
			if f == "query" {
				bodies = append(bodies, `{"query": `+q+`, "k": 3}`)
			} else {
				bodies = append(bodies, fmt.Sprintf(`{"query": %s, %q: %s}`, q, f, js))
			}
		}
		for _, f := range retrieveOtherFields {
			bodies = append(bodies, fmt.Sprintf(`{"query": "Inception", %q: %s}`, f, js))
		}
		bodies = append(bodies,
			fmt.Sprintf(`{"query": "Inception", "filter": {"ids": [%s]}}`, js),
			fmt.Sprintf(`{"query": "Inception", "filter": {"any_entities": [%s]}}`, js),
			fmt.Sprintf(`{"query": %s, "reformulator": "none", "structure": "ged", "stage1": "hybrid"}`, js))
		for _, b := range bodies {
			w := send(h, "POST", "/v1/retrieve", b, map[string]string{"X-Request-ID": inj})
			check("retrieve "+b, w.Code, w.Body.String())
		}
		w := send(h, "POST", "/v1/link", `{"text": `+string(js)+`}`, nil)
		check("link "+inj, w.Code, w.Body.String())
		w = send(h, "GET", "/v1/entities/"+url.PathEscape(inj)+"/subgraph", "", nil)
		check("subgraph qid "+inj, w.Code, w.Body.String())
		for _, p := range []string{"hops", "limit", "hub_degree"} {
			w = send(h, "GET", "/v1/entities/Q25188/subgraph?"+p+"="+url.QueryEscape(inj), "", nil)
			check("subgraph "+p+" "+inj, w.Code, w.Body.String())
		}
	}
	if _, err := os.Stat(pwnedFile); err == nil {
		t.Errorf("a shell injection ran: %s exists", pwnedFile)
	}
	return sent
}

// Against the embedded backends: the graph is unchanged and nothing ran.
func TestInjectionsAreData(t *testing.T) {
	_, g := testPipeline(t)
	e0, t0, r0 := g.Stats()
	n := attack(t, router(t))
	if e, tr, r := g.Stats(); e != e0 || tr != t0 || r != r0 {
		t.Errorf("the graph changed: %d/%d/%d entities/triples/relations, was %d/%d/%d", e, tr, r, e0, t0, r0)
	}
	t.Logf("%d injection requests, all 200/4xx", n)
}

// Against the real Neo4j and Weaviate when the test environment has them.
func TestInjectionsAreDataOnRealBackends(t *testing.T) {
	uri, wurl := os.Getenv("DMAR_NEO4J_URI"), os.Getenv("DMAR_WEAVIATE_URL")
	if uri == "" || wurl == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("DMAR_NEO4J_URI and DMAR_WEAVIATE_URL must be set in CI (scripts/test.sh starts both)")
		}
		t.Skip("DMAR_NEO4J_URI/DMAR_WEAVIATE_URL unset: scripts/services.sh start neo4j; scripts/services.sh start weaviate; export both")
	}
	neo4jtest.Exclusive(t, uri)
	ctx := context.Background()
	cfg := neo4jkg.Config{URI: uri, User: os.Getenv("DMAR_NEO4J_USER"),
		Password: os.Getenv("DMAR_NEO4J_PASSWORD"), Database: os.Getenv("DMAR_NEO4J_DATABASE")}
	st, err := neo4jkg.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(ctx)
	drv, err := neo4j.NewDriverWithContext(cfg.URI, authOf(cfg))
	if err != nil {
		t.Fatal(err)
	}
	defer drv.Close(ctx)
	cypher := func(q string, params map[string]any) int64 {
		t.Helper()
		res, err := neo4j.ExecuteQuery(ctx, drv, q, params, neo4j.EagerResultTransformer)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if len(res.Records) == 0 {
			return 0
		}
		n, _ := res.Records[0].Values[0].(int64)
		return n
	}
	// A sentinel that a DETACH DELETE injection would remove.
	id := fmt.Sprintf("sentinel-%d", rand.Int64())
	cypher(`CREATE (:DmarInjectionSentinel {id: $id})`, map[string]any{"id": id})
	defer cypher(`MATCH (s:DmarInjectionSentinel {id: $id}) DELETE s RETURN count(*)`, map[string]any{"id": id})
	injected := `MATCH (n:Pwned) RETURN count(n)`

	ws, err := weaviate.New(ctx, weaviate.Config{URL: wurl, Class: fmt.Sprintf("DmarInjection%d", rand.Int64N(1<<40)), GRPC: os.Getenv("DMAR_WEAVIATE_GRPC"), Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := ws.Drop(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	docs := testDocs
	if len(docs) > 200 {
		docs = docs[:200]
	}
	if err := ws.Put(ctx, docs); err != nil {
		t.Fatal(err)
	}
	before, err := ws.Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.New(pipeline.Config{Graph: st, Index: ws, Encoder: letterEncoder{}})
	if err != nil {
		t.Fatal(err)
	}
	n := attack(t, server.New(server.Config{Pipeline: p}))
	if got := cypher(`MATCH (s:DmarInjectionSentinel {id: $id}) RETURN count(s)`, map[string]any{"id": id}); got != 1 {
		t.Errorf("the sentinel node is gone (%d): an injection ran as Cypher", got)
	}
	if got := cypher(injected, nil); got != 0 {
		t.Errorf("%d :Pwned nodes: an injection ran as Cypher", got)
	}
	if after, err := ws.Count(ctx); err != nil || after != before {
		t.Errorf("weaviate count %d (%v), was %d", after, err, before)
	}
	t.Logf("%d injection requests against neo4j %s and weaviate %s, all 200/4xx", n, cfg.URI, wurl)
}

func authOf(c neo4jkg.Config) neo4j.AuthToken {
	if c.Password == "" {
		return neo4j.NoAuth()
	}
	user := c.User
	if user == "" {
		user = "neo4j"
	}
	return neo4j.BasicAuth(user, c.Password, "")
}
