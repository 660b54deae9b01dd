package bench

import (
	"context"
	"strings"
	"testing"
)

// A small run measures a graph that finds nearly all of the exact top 100,
// before and after the churn, and prints its row and the table's.
func TestANN(t *testing.T) {
	var out strings.Builder
	r, err := ANN{Size: 3000, Dim: 32, Queries: 30, Seed: 1}.Run(context.Background(), &out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Recall < 0.95 || r.AfterChurn < 0.95 {
		t.Errorf("recall@100 %.4f, after the churn %.4f: want at least 0.95 on 3,000 vectors", r.Recall, r.AfterChurn)
	}
	if r.Ef != 400 || r.VectorBytes != 128 || r.BytesPerVector <= 0 || r.P50 <= 0 || r.P99 < r.P50 {
		t.Errorf("row %+v: want ef 400, 128 bytes a vector, some graph memory, 0 < p50 <= p99", r)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "ann: 3000 documents") || !strings.HasPrefix(lines[1], "| embedded index (`memindex`) | 3000 |") {
		t.Errorf("printed:\n%s", out.String())
	}
}

func TestANNValidate(t *testing.T) {
	for _, c := range []struct {
		a    ANN
		want string
	}{
		{ANN{Size: 10, Dim: 8, Queries: 1}, "--size 10"},
		{ANN{Size: 1000, Dim: 1, Queries: 1}, "--dim 1"},
		{ANN{Size: 1000, Dim: 8}, "--queries 0"},
		{ANN{Size: 1000, Dim: 8, Queries: 1, Ef: -1}, "--ef -1"},
	} {
		if err := c.a.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one naming %s", c.a, err, c.want)
		}
	}
}
