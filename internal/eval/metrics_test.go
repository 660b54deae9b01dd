package eval

import (
	"math"
	"testing"
)

func near(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.6f, want %.6f", name, got, want)
	}
}

func TestRankingMetricsHandComputed(t *testing.T) {
	ranked := []string{"d3", "d1", "d7", "d2", "d9"}
	gold := []string{"d1", "d2", "d5"}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"recall@1", RecallAt(ranked, gold, 1), 0},
		{"recall@2", RecallAt(ranked, gold, 2), 1.0 / 3},
		{"recall@5", RecallAt(ranked, gold, 5), 2.0 / 3},
		{"recall@20 (shorter ranking)", RecallAt(ranked, gold, 20), 2.0 / 3},
		{"hit@1", HitAt(ranked, gold, 1), 0},
		{"hit@2", HitAt(ranked, gold, 2), 1},
		{"all@5", AllAt(ranked, gold, 5), 0},
		{"all@5 two gold", AllAt(ranked, []string{"d1", "d2"}, 5), 1},
		{"all@3 two gold", AllAt(ranked, []string{"d1", "d2"}, 3), 0},
		{"mrr", MRR(ranked, gold), 0.5},
		{"mrr none", MRR(ranked, []string{"x"}), 0},
		// DCG = 1/log2(3) + 1/log2(5); IDCG = 1 + 1/log2(3) + 1/log2(4).
		{"ndcg@10", NDCGAt(ranked, gold, 10), (0.6309297536 + 0.4306765581) / (1 + 0.6309297536 + 0.5)},
		{"ndcg@1", NDCGAt(ranked, gold, 1), 0},
		{"ndcg perfect", NDCGAt([]string{"d1", "d2", "x"}, []string{"d2", "d1"}, 10), 1},
		{"recall no gold", RecallAt(ranked, nil, 5), 0},
		// A document listed twice counts once.
		{"recall duplicate", RecallAt([]string{"d1", "d1"}, []string{"d1", "d2"}, 2), 0.5},
	} {
		near(t, c.name, c.got, c.want, 1e-9)
	}
}

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"The  Eiffel-Tower!":   "eiffeltower",
		"An apple a day":       "apple day",
		"  A ":                 "",
		"Theater":              "theater", // an article only as a whole word
		"U.S.A.":               "usa",
		"the The THE":          "",
		"Nolan's   films\t\n":  "nolans films",
		"£5 (about $6)":        "5 about 6",
		"Café Über":            "café über",
		"anthem, a the banana": "anthem banana",
	} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEMAndF1(t *testing.T) {
	near(t, "em article+case", ExactMatch("The Beatles", []string{"beatles"}), 1, 0)
	near(t, "em other", ExactMatch("Beatles band", []string{"beatles"}), 0, 0)
	near(t, "em best alias", ExactMatch("NYC", []string{"New York City", "nyc"}), 1, 0)
	// pred tokens: cat sat on mat (4); gold: cat on mat (3); common 3.
	near(t, "f1 subset", F1("the cat sat on the mat", []string{"cat on mat"}), 2*0.75*1/1.75, 1e-9)
	// Multiset overlap: x x y vs x y y share one x and one y.
	near(t, "f1 multiset", F1("x x y", []string{"x y y"}), 2.0/3, 1e-9)
	near(t, "f1 none", F1("paris", []string{"london"}), 0, 0)
	near(t, "f1 best of answers", F1("new york", []string{"york", "new york city"}), 0.8, 1e-9)
	near(t, "f1 empty both", F1("the", []string{"a"}), 1, 0)
	near(t, "f1 empty pred", F1("", []string{"paris"}), 0, 0)
}

func TestAnswerRecall(t *testing.T) {
	texts := []string{"Berlin is large.", "Paris is the capital of France."}
	for _, c := range []struct {
		name    string
		answers []string
		k       int
		want    float64
		ok      bool
	}{
		{"found at 2", []string{"The Paris"}, 2, 1, true},
		{"not in top 1", []string{"Paris"}, 1, 0, true},
		{"word boundary", []string{"par"}, 2, 0, true},
		{"alias", []string{"Lutetia", "paris"}, 5, 1, true},
		{"punctuation in text", []string{"large"}, 1, 1, true},
		{"no answer", []string{"", "the"}, 2, 0, false},
	} {
		got, ok := AnswerRecallAt(texts, c.answers, c.k)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: got %v,%v want %v,%v", c.name, got, ok, c.want, c.ok)
		}
	}
}
