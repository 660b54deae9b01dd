package neo4jkg

import (
	"fmt"
	"strings"
	"testing"
)

func TestLuceneQueries(t *testing.T) {
	many := make([]string, maxClauses+3)
	for i := range many {
		many[i] = fmt.Sprintf("f%d", i)
	}
	cases := []struct {
		forms      []string
		queries    int
		first, end string
	}{
		{[]string{"christopher nolan"}, 1, `"christopher nolan"`, `"christopher nolan"`},
		{[]string{"a b", "élan"}, 1, `"a b" OR "élan"`, `"a b" OR "élan"`},
		{many, 2, `"f0" OR "f1"`, `"f514"`},
	}
	for _, c := range cases {
		q := luceneQueries(c.forms)
		if len(q) != c.queries || !strings.HasPrefix(q[0], c.first) || !strings.HasSuffix(q[len(q)-1], c.end) {
			t.Errorf("luceneQueries(%d forms) = %d queries %.40q ... %.40q", len(c.forms), len(q), q[0], q[len(q)-1])
		}
		n := 0
		for _, x := range q {
			n += strings.Count(x, " OR ") + 1
		}
		if n != len(c.forms) {
			t.Errorf("%d clauses for %d forms", n, len(c.forms))
		}
	}
}
