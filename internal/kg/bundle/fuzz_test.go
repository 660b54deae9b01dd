package bundle

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dmar-kg/dmar/internal/kg"
)

// FuzzParseLines reads arbitrary lines as entities.jsonl and triples.tsv
// lines: never a panic; every line is counted read and either loaded or
// bad; what loads has plausible ids; problems stay short.
func FuzzParseLines(f *testing.F) {
	for _, s := range []string{
		`{"qid": "Q42", "label": "Douglas Adams", "aliases": ["DNA"]}`, "Q42\tP31\tQ5", "Q42\tP31\tQ5\r",
		"Q" + strings.Repeat("7", 5000) + "\tP31\tQ5", "Q1\tP" + strings.Repeat("3", 25) + "\tQ5", "Q1\tP31",
		`{"qid": "Q` + strings.Repeat("9", 30) + `"}`, `{"qid": 5}`, `{"qid": "Q01"}`, "\t\t", `{"qid": "Q1", "label": ` + strings.Repeat("[", 5000) + `}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var st Stats
		first := map[string]int{}
		e, ok := parseEntity("entities.jsonl", 1, line, first, &st)
		if ok && (len(e.QID) > maxIDDigits+1 || !kg.ValidQID(e.QID)) {
			t.Fatalf("loaded entity %q", e.QID)
		}
		seen := newTripleSet()
		tr, ok := parseTriple("triples.tsv", 1, line, seen.firstLine, &st)
		if ok {
			for _, id := range []string{tr.Head, tr.PID, tr.Tail} {
				if len(id) > maxIDDigits+1 {
					t.Fatalf("loaded triple %v", tr)
				}
			}
		}
		if st.EntitiesRead != st.EntitiesLoaded+st.EntitiesBad || st.TriplesRead != st.TriplesLoaded+st.TriplesBad {
			t.Fatalf("counts %+v", st)
		}
		for _, p := range st.Problems {
			if utf8.RuneCountInString(p) > 400 {
				t.Fatalf("a %d-character problem", utf8.RuneCountInString(p))
			}
		}
	})
}
