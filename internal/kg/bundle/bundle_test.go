package bundle

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/datapath/datatest"
	"github.com/dmar-kg/dmar/internal/kg"
)

// copyFilm copies the real codexm-film bundle into a temporary directory.
func copyFilm(t *testing.T) string {
	t.Helper()
	return datatest.CopyBundle(t, "codexm-film", "")
}

// mustRead is the bundle in dir; an error fails the test.
func mustRead(t *testing.T, dir string) *KG {
	t.Helper()
	b, err := Read(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func appendTo(t *testing.T, path, text string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		b = append(b, '\n')
	}
	line := strings.Count(string(b), "\n") + 1
	if err := os.WriteFile(path, append(b, text...), 0o644); err != nil {
		t.Fatal(err)
	}
	return line
}

func entity(b *KG, qid string) (kg.Entity, bool) {
	for _, e := range b.Entities {
		if e.QID == qid {
			return e, true
		}
	}
	return kg.Entity{}, false
}

// TestRepeatedEntityKeepsTheFirst appends a second line for Q25191 to the
// film bundle: the first one stands, the repeat is counted and reported
// with its line numbers.
func TestRepeatedEntityKeepsTheFirst(t *testing.T) {
	dir := copyFilm(t)
	before := mustRead(t, dir)
	orig, ok := entity(before, "Q25191")
	if !ok {
		t.Fatal("Q25191 not in the film bundle")
	}
	line := appendTo(t, filepath.Join(dir, "entities.jsonl"), `{"qid":"Q25191","label":"EVIL OVERRIDE"}`+"\n")
	after := mustRead(t, dir)
	got, _ := entity(after, "Q25191")
	if got.Label != orig.Label || len(got.Aliases) != len(orig.Aliases) {
		t.Fatalf("Q25191 = %+v, want the first line's %+v", got, orig)
	}
	st := after.Stats
	if st.EntitiesDuplicate != 1 || st.EntitiesLoaded != before.Stats.EntitiesLoaded || st.EntitiesRead != st.EntitiesLoaded+st.EntitiesBad+st.EntitiesDuplicate {
		t.Fatalf("stats %+v (before %+v)", st, before.Stats)
	}
	var found bool
	for _, p := range st.Problems {
		if strings.Contains(p, "entities.jsonl:"+itoa(line)+":") && strings.Contains(p, "Q25191") && strings.Contains(p, "line 30") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no problem names line %d and the first line 30: %q", line, st.Problems)
	}
	ms := kg.NewDictionary(after.Entities).Link("Christopher Nolan directed a film.")
	var linked bool
	for _, m := range ms {
		linked = linked || m.QID == "Q25191"
	}
	if !linked {
		t.Fatalf("\"Christopher Nolan\" no longer links to Q25191: %+v", ms)
	}
}

// TestRepeatedRelationKeepsTheFirst: a property repeated in relations.json
// (encoding/json keeps the last silently) keeps its first label, and the
// repeat is counted and reported with its line.
func TestRepeatedRelationKeepsTheFirst(t *testing.T) {
	dir := copyFilm(t)
	p := filepath.Join(dir, "relations.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.TrimRight(string(b), "\n }")
	s += "\n },\n \"P17\": {\n  \"label\": \"EVIL\"\n }\n}\n"
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	line := strings.Count(s[:strings.LastIndex(s, `"P17"`)], "\n") + 1
	out := mustRead(t, dir)
	if out.Relations["P17"].Label != "country" {
		t.Fatalf("P17 = %+v, want the first entry's label", out.Relations["P17"])
	}
	if out.Stats.RelationsDuplicate != 1 || len(out.Stats.Problems) == 0 || !strings.Contains(out.Stats.Problems[0], "relations.json:"+itoa(line)+":") {
		t.Fatalf("stats %+v, want one duplicate reported at line %d", out.Stats, line)
	}
}

// TestRepeatedTripleReported: a repeated triple is counted (as before) and
// now reported with both line numbers.
func TestRepeatedTripleReported(t *testing.T) {
	dir := copyFilm(t)
	p := filepath.Join(dir, "triples.tsv")
	b, _ := os.ReadFile(p)
	first, _, _ := strings.Cut(string(b), "\n")
	line := appendTo(t, p, first+"\n")
	out := mustRead(t, dir)
	if out.Stats.TriplesDuplicate != 1 || len(out.Stats.Problems) != 1 ||
		!strings.Contains(out.Stats.Problems[0], "triples.tsv:"+itoa(line)+":") || !strings.Contains(out.Stats.Problems[0], "line 1") {
		t.Fatalf("stats %+v", out.Stats)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestCorpusGivesLeadNames: documents beside the bundle give their entities
// lead names (a name the entity already has is no lead name); a bad corpus
// line is counted and skipped, and a document of no entity is ignored.
func TestCorpusGivesLeadNames(t *testing.T) {
	dir := copyFilm(t)
	before := mustRead(t, dir)
	if before.Stats.LeadNamed != 0 {
		t.Fatalf("a bundle without a corpus gave %d entities lead names", before.Stats.LeadNamed)
	}
	nolan, ok := entity(before, "Q25191")
	if !ok {
		t.Fatal("Q25191 not in the film bundle")
	}
	if err := os.WriteFile(filepath.Join(dir, CorpusFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	appendTo(t, filepath.Join(dir, CorpusFile), `{"id":"Q25191","title":"x","text":"`+nolan.Label+` (born 30 July 1970), known professionally as Chris Nolan or simply `+nolan.Label+`, is a film director."}
not json
{"id":"Q999999999","title":"y","text":"Nobody, known as Somebody, is nobody."}
`)
	after := mustRead(t, dir)
	got, _ := entity(after, "Q25191")
	if want := []string{"Chris Nolan"}; !reflect.DeepEqual(got.LeadNames, want) {
		t.Errorf("lead names of Q25191 = %q, want %q", got.LeadNames, want)
	}
	if _, ok := entity(after, "Q999999999"); ok {
		t.Error("a document of no entity added an entity")
	}
	st := after.Stats
	if st.LeadNamed != 1 || st.DocumentsBad != 1 || st.EntitiesLoaded != before.Stats.EntitiesLoaded {
		t.Errorf("stats %+v: want 1 entity with lead names, 1 bad corpus line, the same entities", st)
	}
}

// TestImplausibleIDsAreBadLines is issue 34's case: a triple whose QID has
// 5,242,880 digits used to load as an entity. An id of more than 20
// digits is a bad line, counted and reported in a short problem, by Read
// and Stream alike; so is a line over the line limit, which is not held.
func TestImplausibleIDsAreBadLines(t *testing.T) {
	dir := copyFilm(t)
	ctx := context.Background()
	before := mustRead(t, dir)
	huge := "Q" + strings.Repeat("7", 5<<20)
	appendTo(t, filepath.Join(dir, "triples.tsv"), huge+"\tP31\tQ5\nQ1\tP"+strings.Repeat("3", 25)+"\tQ5\nQ1\tP31\tQ"+strings.Repeat("1", 21)+"\nQ1\tP31\tQ"+strings.Repeat("1", 20)+"\n")
	appendTo(t, filepath.Join(dir, "entities.jsonl"), `{"qid": "Q`+strings.Repeat("9", 30)+`", "label": "x"}`+"\n")
	defer func(n int) { maxLine = n }(maxLine)
	maxLine = 4 << 20 // the huge line is over it, so it is counted without being held
	got := mustRead(t, dir)
	st := got.Stats
	if st.TriplesBad != before.Stats.TriplesBad+3 || st.TriplesLoaded != before.Stats.TriplesLoaded+1 || st.EntitiesBad != before.Stats.EntitiesBad+1 {
		t.Fatalf("stats %+v, before %+v", st, before.Stats)
	}
	for _, e := range got.Entities {
		if len(e.QID) > 21 {
			t.Fatalf("an entity of %d characters loaded", len(e.QID))
		}
	}
	var long, implausible int
	for _, p := range st.Problems {
		if len(p) > 300 {
			t.Errorf("a %d-byte problem: %.100s", len(p), p)
		}
		if strings.Contains(p, "a line over") {
			long++
		}
		if strings.Contains(p, "not a plausible") {
			implausible++
		}
	}
	if long != 1 || implausible != 3 {
		t.Errorf("problems %q", st.Problems)
	}
	maxLine = 64 << 20
	sst, err := Stream(ctx, dir, &recorder{rels: map[string]kg.Relation{}}, 0)
	if err != nil || sst.TriplesBad != before.Stats.TriplesBad+3 || sst.EntitiesBad != before.Stats.EntitiesBad+1 {
		t.Fatalf("stream: %+v, %v", sst, err)
	}
}
