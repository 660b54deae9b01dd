package memindex

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/corpus"
	"github.com/dmar-kg/dmar/internal/datapath"
	"github.com/dmar-kg/dmar/internal/datapath/datatest"
	"github.com/dmar-kg/dmar/internal/retrieval"
)

// realCorpus is one of the shared data's corpora with questions asked of it.
type realCorpus struct {
	name      string
	docs      []retrieval.Document
	questions []string
}

// realCorpora reads codexm (kgqa dev, triviaqa and FEVER's questions and
// claims), nq-open's passages (its questions) and MuSiQue's paragraphs (its
// questions), skipping the test when the shared data is not there.
func realCorpora(t *testing.T) []realCorpus {
	t.Helper()
	ctx := context.Background()
	read := func(set, file string) string {
		dir, err := datapath.Dataset(set)
		if err != nil {
			t.Skip("shared data:", err)
		}
		return filepath.Join(dir, file)
	}
	questions := func(path, field string) []string {
		var out []string
		for _, m := range datatest.JSONL[map[string]any](t, path, 0) {
			if q, _ := m[field].(string); q != "" {
				out = append(out, q)
			}
		}
		return out
	}
	var out []realCorpus
	codexm, _, err := corpus.ReadFile(ctx, read("codexm", "corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var cq []string
	cq = append(cq, questions(read("kgqa", "dev.jsonl"), "question")...)
	cq = append(cq, questions(read("triviaqa", "dev.jsonl"), "question")...)
	cq = append(cq, questions(read("fever", "dev.jsonl"), "claim")...)
	out = append(out, realCorpus{"codexm", codexm, cq})
	nq, _, err := corpus.ReadFile(ctx, read("nq-open", "corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, realCorpus{"nq-open", nq, questions(read("nq-open", "dev.jsonl"), "question")})
	var mq struct {
		Paragraphs []struct{ Title, Text string }
	}
	b, err := os.ReadFile(read("musique-100", "corpus.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &mq.Paragraphs); err != nil {
		t.Fatal(err)
	}
	var mdocs []retrieval.Document
	for i, p := range mq.Paragraphs {
		mdocs = append(mdocs, retrieval.Document{ID: "musique-" + strconv.Itoa(i), Title: p.Title, Text: p.Text})
	}
	var qs []struct{ Question string }
	b, err = os.ReadFile(read("musique-100", "questions.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &qs); err != nil {
		t.Fatal(err)
	}
	var mqs []string
	for _, q := range qs {
		mqs = append(mqs, q.Question)
	}
	return append(out, realCorpus{"musique-100", mdocs, mqs})
}

// mixedQueries are queries of 1 to 6 words drawn from the corpus's own
// text, half of them from its most frequent words: the queries whose
// posting lists MaxScore skips most of, and those where it can skip none.
func mixedQueries(docs []retrieval.Document, n int, seed uint64) []string {
	freq := map[string]int{}
	for _, d := range docs {
		for _, t := range Tokens(d.Title + " " + d.Text) {
			freq[t]++
		}
	}
	var words []string
	for w := range freq {
		if !stopwords[w] {
			words = append(words, w)
		}
	}
	sort.Slice(words, func(i, j int) bool {
		if freq[words[i]] != freq[words[j]] {
			return freq[words[i]] > freq[words[j]]
		}
		return words[i] < words[j]
	})
	common := words[:min(200, len(words))]
	rng := rand.New(rand.NewPCG(seed, 36))
	out := make([]string, n)
	for i := range out {
		var q []string
		for range 1 + rng.IntN(6) {
			if rng.IntN(2) == 0 {
				q = append(q, common[rng.IntN(len(common))])
			} else {
				q = append(q, words[rng.IntN(len(words))])
			}
		}
		out[i] = strings.Join(q, " ")
	}
	return out
}

// TestMaxScoreMatchesExhaustive: over the real corpora, with their own
// questions and with mixed queries of frequent and rare words, MaxScore
// returns what scoring every posting returns (documents, order and scores
// to the bit), with Weaviate's per-field cut at the limits the pipeline
// uses, with classic BM25, filtered or not, and after deletes.
func TestMaxScoreMatchesExhaustive(t *testing.T) {
	if raceEnabled {
		t.Skip("long comparison: run without -race")
	}
	classic := DefaultParams()
	classic.Classic, classic.WeaviateTopK = true, false
	for _, c := range realCorpora(t) {
		for _, p := range []struct {
			name string
			p    Params
		}{{"weaviate", DefaultParams()}, {"classic", classic}} {
			t.Run(c.name+"/"+p.name, func(t *testing.T) {
				x := New(p.p)
				if err := x.Put(context.Background(), c.docs); err != nil {
					t.Fatal(err)
				}
				qs := append(append([]string(nil), c.questions[:min(300, len(c.questions))]...), mixedQueries(c.docs, 300, uint64(len(c.docs)))...)
				check := func(g *gen, allow []bool) int {
					n := 0
					for _, q := range qs {
						lx := g.lexicalOf(q)
						for _, limit := range []int{5, 20, 100} {
							wl := min(limit+WeaviateTieSlack, 10000)
							got := g.bm25Pruned(lx, allow, wl, limit)
							want := g.bm25Exhaustive(lx, allow, wl, limit)
							if len(got) != len(want) {
								t.Fatalf("%q limit %d: %d hits, exhaustive %d", q, limit, len(got), len(want))
							}
							for i := range got {
								if got[i] != want[i] {
									t.Fatalf("%q limit %d: hit %d is %s %v, exhaustive %s %v", q, limit, i,
										g.docs[got[i].doc].ID, got[i].score, g.docs[want[i].doc].ID, want[i].score)
								}
							}
							n++
						}
					}
					return n
				}
				g := x.cur.Load()
				n := check(g, nil)
				allow := make([]bool, len(g.docs))
				for i := range allow {
					allow[i] = i%3 != 0
				}
				n += check(g, allow)
				var del []string
				for i := 0; i < len(c.docs); i += 7 {
					del = append(del, c.docs[i].ID)
				}
				if _, err := x.Delete(context.Background(), del); err != nil {
					t.Fatal(err)
				}
				n += check(x.cur.Load(), nil)
				t.Logf("%d documents: %d searches identical", len(c.docs), n)
			})
		}
	}
}

// BenchmarkBM25 times BM25 searches (limit 100, Weaviate's cut) on codexm
// with its questions and mixed queries, MaxScore against every posting.
func BenchmarkBM25(b *testing.B) {
	cs := realCorpora(&testing.T{})
	c := cs[0]
	x := New(DefaultParams())
	if err := x.Put(context.Background(), c.docs); err != nil {
		b.Fatal(err)
	}
	g := x.cur.Load()
	qs := append(append([]string(nil), c.questions[:200]...), mixedQueries(c.docs, 200, 1)...)
	lxs := make([]lexical, len(qs))
	for i, q := range qs {
		lxs[i] = g.lexicalOf(q)
	}
	for _, m := range []struct {
		name string
		f    func(lexical) []scoredDoc
	}{
		{"maxscore", func(lx lexical) []scoredDoc { return g.bm25Pruned(lx, nil, 108, 100) }},
		{"exhaustive", func(lx lexical) []scoredDoc { return g.bm25Exhaustive(lx, nil, 108, 100) }},
	} {
		b.Run(m.name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				m.f(lxs[i%len(lxs)])
			}
		})
	}
}

func TestKthLargest(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for n := 1; n < 300; n += 7 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(rng.IntN(20)) // ties
		}
		sorted := append([]float64(nil), xs...)
		sort.Sort(sort.Reverse(sort.Float64Slice(sorted)))
		for k := 1; k <= n; k += 3 {
			if got := kthLargest(append([]float64(nil), xs...), k); got != sorted[k-1] {
				t.Fatalf("n %d k %d: %v, want %v", n, k, got, sorted[k-1])
			}
		}
	}
}
