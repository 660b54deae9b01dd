package cypher_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/dmar-kg/dmar/cypher"
	"github.com/dmar-kg/dmar/internal/kg/neo4jkg/neo4jtest"
)

// TestExplainAll has the real Neo4j plan every statement (queries and
// migrations) without running it: syntax, procedures, index names and
// Cypher version features are all checked.
func TestExplainAll(t *testing.T) {
	uri := os.Getenv("DMAR_NEO4J_URI")
	if uri == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("DMAR_NEO4J_URI is not set in CI: .ci/run must start Neo4j (scripts/services.sh start neo4j)")
		}
		t.Skip("needs Neo4j: scripts/services.sh start neo4j; export DMAR_NEO4J_URI=bolt://127.0.0.1:7687")
	}
	neo4jtest.Exclusive(t, uri)
	auth := neo4j.NoAuth()
	if pw := os.Getenv("DMAR_NEO4J_PASSWORD"); pw != "" {
		auth = neo4j.BasicAuth("neo4j", pw, "")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d, err := neo4j.NewDriverWithContext(uri, auth)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(ctx)
	qs, ms, err := cypher.Load()
	if err != nil {
		t.Fatal(err)
	}
	stmts := map[string]string{}
	for name, q := range qs {
		stmts[name] = q
	}
	for _, m := range ms {
		stmts[fmt.Sprintf("migrations/%03d_%s", m.N, m.Name)] = m.Statement
	}
	// link_candidates names the full-text index entity_names: it must exist
	// for the plan, so apply the (idempotent) migrations first.
	for _, m := range ms {
		if _, err := neo4j.ExecuteQuery(ctx, d, m.Statement, nil, neo4j.EagerResultTransformer); err != nil {
			t.Fatalf("migration %03d_%s: %v", m.N, m.Name, err)
		}
	}
	for name, q := range stmts {
		t.Run(name, func(t *testing.T) {
			// An implicit transaction: CALL ... IN TRANSACTIONS plans only there.
			sess := d.NewSession(ctx, neo4j.SessionConfig{})
			defer sess.Close(ctx)
			res, err := sess.Run(ctx, "EXPLAIN "+q, nil)
			if err == nil {
				var sum neo4j.ResultSummary
				sum, err = res.Consume(ctx)
				if err == nil && sum.Plan() == nil {
					err = fmt.Errorf("no plan returned")
				}
			}
			if err != nil {
				t.Fatalf("EXPLAIN %s: %v", name, err)
			}
		})
	}
}
