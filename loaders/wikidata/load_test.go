package wikidata

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/datapath"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/bundle"
	"github.com/dmar-kg/dmar/loaders/bundlesink"
	"github.com/dmar-kg/dmar/loaders/neo4jcsv"
)

// memSink records what a load wrote, in order.
type memSink struct {
	ents    []kg.Entity
	triples []kg.Triple
	rels    []kg.Relation
	closed  int
}

var _ kg.Sink = (*memSink)(nil)

func (m *memSink) WriteEntities(_ context.Context, es []kg.Entity) error {
	m.ents = append(m.ents, es...)
	return nil
}
func (m *memSink) WriteTriples(_ context.Context, ts []kg.Triple) error {
	m.triples = append(m.triples, ts...)
	return nil
}
func (m *memSink) WriteRelations(_ context.Context, rs []kg.Relation) error {
	m.rels = append(m.rels, rs...)
	return nil
}
func (m *memSink) Close(context.Context) error { m.closed++; return nil }

// samplePath is the shared dump sample with its closing bracket: the
// shared file is the first 50 lines of a real dump, cut off there
// (rawSamplePath), and a load of it fails unless Options.AllowTruncated.
func samplePath(t testing.TB) string {
	t.Helper()
	raw, err := os.ReadFile(rawSamplePath(t))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "latest-all-first50-closed.json")
	if err := os.WriteFile(p, append(raw, "]\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func rawSamplePath(t testing.TB) string {
	t.Helper()
	dir, err := datapath.Dataset("wikidata-dump-sample")
	if err != nil {
		t.Skip("shared data not found:", err)
	}
	p := filepath.Join(dir, "latest-all-first50.json")
	if _, err := os.Stat(p); err != nil {
		t.Skip("dump sample not found:", err)
	}
	return p
}

func checkCounts(t *testing.T, st Stats) {
	t.Helper()
	if st.Read != st.Loaded+st.Filtered+st.Bad {
		t.Fatalf("read %d != loaded %d + filtered %d + bad %d", st.Read, st.Loaded, st.Filtered, st.Bad)
	}
}

func load(t *testing.T, path string, o Options) (*memSink, Stats) {
	t.Helper()
	s := &memSink{}
	st, err := Load(context.Background(), path, s, o)
	if err != nil {
		t.Fatalf("Load(%s): %v", path, err)
	}
	if s.closed != 1 {
		t.Fatalf("sink closed %d times", s.closed)
	}
	checkCounts(t, st)
	return s, st
}

func TestLoadSample(t *testing.T) {
	path := samplePath(t)
	s, st := load(t, path, Options{Workers: 2})
	if st.Read != 49 || st.Loaded != 49 || st.Bad != 0 || st.Filtered != 0 {
		t.Fatalf("counts %+v, want 49 read and loaded", st.Counts)
	}
	if len(s.ents) != 49 || s.ents[0].QID != "Q22" || s.ents[0].Label != "Scotland" || s.ents[48].QID != "Q313" {
		t.Fatalf("entities not in dump order: first %+v, n %d", s.ents[0], len(s.ents))
	}
	if st.Triples != len(s.triples) || st.Triples < 1000 {
		t.Fatalf("%d triples (%d written)", st.Triples, len(s.triples))
	}
	// Q22 is an instance of country (Q6256) with preferred rank on Q3336843:
	// only the preferred statement of P31 is truthy.
	var p31 []string
	for _, tr := range s.triples {
		if tr.Head == "Q22" && tr.PID == "P31" {
			p31 = append(p31, tr.Tail)
		}
	}
	if !reflect.DeepEqual(p31, []string{"Q3336843"}) {
		t.Fatalf("Q22 P31 = %v, want the preferred-rank value only", p31)
	}
	if st.Bytes != 3699025 {
		t.Fatalf("bytes %d, want the file's 3699025", st.Bytes)
	}
}

func TestLoadCompressedEqualsPlain(t *testing.T) {
	path := samplePath(t)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gz := filepath.Join(dir, "latest-all.json.gz")
	zipped := gzipBytes(t, raw)
	if err := os.WriteFile(gz, zipped, 0o644); err != nil {
		t.Fatal(err)
	}
	// No extension: the magic bytes decide.
	noext := filepath.Join(dir, "dump")
	if err := os.WriteFile(noext, zipped, 0o644); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"gzip": gz, "gzip by magic": noext}
	if _, err := exec.LookPath("bzip2"); err == nil {
		bz := filepath.Join(dir, "latest-all.json")
		if err := os.WriteFile(bz, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("bzip2", "-k", bz).CombinedOutput(); err != nil {
			t.Fatalf("bzip2: %v %s", err, out)
		}
		files["bzip2"] = bz + ".bz2"
	} else {
		t.Log("bzip2 command not found: the .bz2 case is skipped")
	}
	want, wst := load(t, path, Options{})
	for name, f := range files {
		for _, mode := range []string{"go", "external", "auto"} {
			t.Run(name+" "+mode, func(t *testing.T) {
				skipWithoutTool(t, f, mode)
				got, st := load(t, f, Options{Decompress: mode, Workers: 3})
				if st.Read != wst.Read || st.Loaded != wst.Loaded || st.Bytes != wst.Bytes {
					t.Fatalf("stats %+v, want %+v", st, wst)
				}
				if !reflect.DeepEqual(got.ents, want.ents) || !reflect.DeepEqual(got.triples, want.triples) {
					t.Fatal("compressed load differs from the plain one")
				}
			})
		}
	}
}

func TestLoadBadLinesCountedWithOffsets(t *testing.T) {
	path := samplePath(t)
	raw, _ := os.ReadFile(path)
	lines := strings.SplitAfter(string(raw), "\n")
	var out strings.Builder
	var offsets []int
	inject := map[int]string{3: "{\"type\":\"item\",\"id\":\"Q999\",\"labels\":{\n", 10: "not json at all,\n", 20: "{\"type\":\"item\",\"id\":\"Q1000\"} trailing,\n"}
	for i, l := range lines {
		if bad, ok := inject[i]; ok {
			offsets = append(offsets, out.Len())
			out.WriteString(bad)
		}
		out.WriteString(l)
	}
	p := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(p, []byte(out.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	s, st := load(t, p, Options{Log: &log, Workers: 2})
	if st.Bad != 3 || st.Loaded != 49 || st.Read != 52 {
		t.Fatalf("counts %+v, want 3 bad, 49 loaded, 52 read", st.Counts)
	}
	for i, off := range offsets {
		if !strings.HasPrefix(st.Problems[i], fmt.Sprintf("byte %d: ", off)) {
			t.Errorf("problem %d = %q, want byte offset %d", i, st.Problems[i], off)
		}
		if !strings.Contains(log.String(), fmt.Sprintf("byte %d: ", off)) {
			t.Errorf("log lacks offset %d:\n%s", off, log.String())
		}
	}
	want, _ := load(t, path, Options{})
	if !reflect.DeepEqual(s.ents, want.ents) || !reflect.DeepEqual(s.triples, want.triples) {
		t.Fatal("bad lines changed what the good lines loaded")
	}
}

// TestLoadCutOffMidLine: a dump cut inside its last entity line, or whose
// compressed stream is cut off, fails the load; with AllowTruncated what
// came before the cut loads and the cut line is counted bad.
func TestLoadCutOffMidLine(t *testing.T) {
	path := samplePath(t)
	raw, _ := os.ReadFile(path)
	raw = bytes.TrimSuffix(raw, []byte("]\n"))
	last := bytes.LastIndexByte(raw[:len(raw)-1], '\n')
	cut := raw[:last+1+(len(raw)-last)/2] // half of the last entity line
	dir := t.TempDir()
	p := filepath.Join(dir, "cut.json")
	if err := os.WriteFile(p, cut, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(context.Background(), p, &memSink{}, Options{}); !errors.As(err, new(*TruncatedError)) {
		t.Fatalf("a dump cut mid-line: %v, want a *TruncatedError", err)
	}
	_, st := load(t, p, Options{AllowTruncated: true})
	if st.Read != 49 || st.Loaded != 48 || st.Bad != 1 || !strings.Contains(st.Problems[0], "cut-off last line") ||
		!strings.HasPrefix(st.Problems[0], fmt.Sprintf("byte %d:", last+1)) || !st.Truncated {
		t.Fatalf("counts %+v", st.Counts)
	}
	// A gzip stream that is itself cut off: what was decompressed loads.
	zipped := gzipBytes(t, raw)
	gz := filepath.Join(dir, "cut.json.gz")
	if err := os.WriteFile(gz, zipped[:len(zipped)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	cuts := []string{gz}
	if _, err := exec.LookPath("bzip2"); err == nil {
		bz := filepath.Join(dir, "full.json")
		if err := os.WriteFile(bz, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("bzip2", bz).CombinedOutput(); err != nil {
			t.Fatalf("bzip2: %v %s", err, out)
		}
		b, _ := os.ReadFile(bz + ".bz2")
		if err := os.WriteFile(filepath.Join(dir, "cut.json.bz2"), b[:len(b)/2], 0o644); err != nil {
			t.Fatal(err)
		}
		cuts = append(cuts, filepath.Join(dir, "cut.json.bz2"))
	}
	for _, p := range cuts {
		for _, mode := range []string{"go", "external"} {
			if mode == "external" && !hasTool(p) {
				t.Logf("no external decompressor for %s on PATH: that case is skipped", p)
				continue
			}
			if _, err := Load(context.Background(), p, &memSink{}, Options{Decompress: mode}); !errors.As(err, new(*TruncatedError)) {
				t.Fatalf("cut %s with %s: %v, want a *TruncatedError", p, mode, err)
			}
			_, st = load(t, p, Options{Decompress: mode, AllowTruncated: true})
			if !st.Truncated || st.Loaded < 10 || st.Loaded >= 49 || st.Bad != 1 {
				t.Fatalf("cut %s with %s: %+v", p, mode, st)
			}
		}
	}
}

func TestLoadFilters(t *testing.T) {
	path := samplePath(t)
	raw, _ := os.ReadFile(path)
	extra := `{"type":"property","id":"P31","labels":{"en":{"value":"instance of"}},"descriptions":{"en":{"value":"that class"}}},` + "\n" +
		`{"type":"lexeme","id":"L1","lemmas":{}},` + "\n" + `{"type":"item","id":"Q22","labels":{"en":{"value":"duplicate"}}},` + "\n"
	p := filepath.Join(t.TempDir(), "mixed.json")
	if err := os.WriteFile(p, append(append([]byte{}, raw...), extra...), 0o644); err != nil {
		t.Fatal(err)
	}

	s, st := load(t, p, Options{})
	if st.Read != 52 || st.Loaded != 50 || st.Filtered != 2 || len(s.rels) != 1 || s.rels[0] != (kg.Relation{PID: "P31", Label: "instance of", Description: "that class"}) {
		t.Fatalf("default: %+v rels %v", st.Counts, s.rels)
	}
	for _, e := range s.ents {
		if e.Label == "duplicate" {
			t.Fatal("a repeated item replaced the first one")
		}
	}
	s, st = load(t, p, Options{ItemsOnly: true})
	if st.Loaded != 49 || st.Filtered != 3 || len(s.rels) != 0 {
		t.Fatalf("items only: %+v rels %v", st.Counts, s.rels)
	}
	s, _ = load(t, p, Options{Filter: Filter{Languages: []string{"de"}, Properties: map[string]bool{"P31": true}}})
	if s.ents[0].Label != "Schottland" {
		t.Fatalf("German label of Q22 = %q", s.ents[0].Label)
	}
	for _, tr := range s.triples {
		if tr.PID != "P31" {
			t.Fatalf("property filter let %v through", tr)
		}
	}
	if len(s.triples) == 0 {
		t.Fatal("no P31 triples")
	}
	props, err := datapath.Dataset("wikidata-properties")
	if err == nil {
		s, st = load(t, path, Options{PropertiesTSV: filepath.Join(props, "properties_with_labels.tsv")})
		if st.Relations < 2000 || len(s.rels) != st.Relations {
			t.Fatalf("%d relations from the TSV", st.Relations)
		}
	}
	if _, err := Load(context.Background(), path, &memSink{}, Options{Seeds: []string{"Q1 OR 1=1"}}); err == nil {
		t.Fatal("a bad seed was accepted")
	}
}

// TestLoadSeedsHops checks seed mode against a BFS over the parsed sample.
func TestLoadSeedsHops(t *testing.T) {
	path := samplePath(t)
	adj := map[string]map[string]bool{}
	dumped := map[string]Entity{}
	for _, l := range sampleLines(t) {
		e, err := ParseLine(l, nil)
		if err != nil {
			t.Fatal(err)
		}
		dumped[e.ID] = e
		for _, c := range e.Claims {
			for _, pair := range [][2]string{{e.ID, c.QID}, {c.QID, e.ID}} {
				if adj[pair[0]] == nil {
					adj[pair[0]] = map[string]bool{}
				}
				adj[pair[0]][pair[1]] = true
			}
		}
	}
	for _, tc := range []struct {
		seeds []string
		hops  int
	}{{[]string{"Q22"}, 0}, {[]string{"Q22"}, 1}, {[]string{"Q31", "Q64"}, 2}} {
		t.Run(fmt.Sprint(tc.seeds, tc.hops), func(t *testing.T) {
			in := map[string]bool{}
			frontier := tc.seeds
			for _, q := range tc.seeds {
				in[q] = true
			}
			for h := 0; h < tc.hops; h++ {
				var next []string
				for _, q := range frontier {
					for n := range adj[q] {
						if !in[n] {
							in[n] = true
							next = append(next, n)
						}
					}
				}
				frontier = next
			}
			var wantE []string
			var wantT []kg.Triple
			for q, e := range dumped {
				if !in[q] {
					continue
				}
				wantE = append(wantE, q)
				for _, c := range e.Claims {
					if in[c.QID] {
						wantT = append(wantT, kg.Triple{Head: q, PID: c.PID, Tail: c.QID})
					}
				}
			}
			s, st := load(t, path, Options{Seeds: tc.seeds, Hops: tc.hops})
			var gotE []string
			for _, e := range s.ents {
				gotE = append(gotE, e.QID)
			}
			sort.Strings(gotE)
			sort.Strings(wantE)
			sortTriples(wantT)
			gotT := append([]kg.Triple(nil), s.triples...)
			sortTriples(gotT)
			if !reflect.DeepEqual(gotE, wantE) || !reflect.DeepEqual(gotT, wantT) {
				t.Fatalf("entities %v\nwant %v\ntriples %d want %d", gotE, wantE, len(gotT), len(wantT))
			}
			if st.Passes != tc.hops+1 || st.Loaded != len(wantE) || st.Filtered != 49-len(wantE) {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

func sortTriples(ts []kg.Triple) {
	slices.SortFunc(ts, kg.CompareTriples)
}

// TestLoadIntoSinksRerunsIdentical loads the sample into both file sinks
// twice, with different worker counts: the files must be byte-identical.
func TestLoadIntoSinksRerunsIdentical(t *testing.T) {
	path := samplePath(t)
	dir := t.TempDir()
	read := func(d string) map[string]string {
		out := map[string]string{}
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			b, _ := os.ReadFile(filepath.Join(d, e.Name()))
			out[e.Name()] = string(b)
		}
		return out
	}
	var first map[string]string
	for run, workers := range []int{1, 4, 2} {
		csvSink, err := neo4jcsv.New(filepath.Join(dir, "csv"), neo4jcsv.Options{UniqueTriples: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Load(context.Background(), path, csvSink, Options{Workers: workers}); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(context.Background(), path, bundlesink.New(filepath.Join(dir, "bundle")), Options{Workers: workers}); err != nil {
			t.Fatal(err)
		}
		files := read(filepath.Join(dir, "csv"))
		for k, v := range read(filepath.Join(dir, "bundle")) {
			files["bundle/"+k] = v
		}
		if len(files) != 5 {
			t.Fatalf("run %d left files %v", run, keys(files))
		}
		if first == nil {
			first = files
		} else if !reflect.DeepEqual(files, first) {
			t.Fatalf("run %d (workers %d) wrote different files", run, workers)
		}
	}
	// The bundle reads back as the same graph.
	kgb, err := bundle.Read(context.Background(), filepath.Join(dir, "bundle"))
	if err != nil {
		t.Fatal(err)
	}
	s, _ := load(t, path, Options{})
	if kgb.Stats.TriplesLoaded != len(s.triples) || kgb.Stats.EntitiesLoaded != 49 || kgb.Stats.EntitiesBad+kgb.Stats.TriplesBad != 0 {
		t.Fatalf("bundle read back: %+v", kgb.Stats)
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// hasTool reports whether an external decompressor for path's kind is on PATH.
func hasTool(path string) bool {
	kind := "gzip"
	if strings.HasSuffix(path, ".bz2") {
		kind = "bzip2"
	}
	for _, tool := range externalTools[kind] {
		if _, err := exec.LookPath(tool[0]); err == nil {
			return true
		}
	}
	return false
}

func skipWithoutTool(t *testing.T, path, mode string) {
	if mode == "external" && !hasTool(path) {
		t.Skip("no external decompressor on PATH for", path)
	}
}

func TestLoadLongLinesAreBad(t *testing.T) {
	path := samplePath(t)
	_, st := load(t, path, Options{MaxLine: 150000})
	if st.Bad == 0 || st.Loaded == 0 || st.Read != 49 || !strings.Contains(st.Problems[0], "longer than the limit") {
		t.Fatalf("counts %+v", st.Counts)
	}
	// Offsets stay exact after a dropped line: every reported offset starts a line.
	raw, _ := os.ReadFile(path)
	for _, p := range st.Problems {
		var off int
		if _, err := fmt.Sscanf(p, "byte %d:", &off); err != nil {
			t.Fatalf("%q: %v", p, err)
		}
		if off == 0 || raw[off-1] != '\n' || raw[off] != '{' {
			t.Fatalf("%q: offset %d does not start a line", p, off)
		}
	}
}

// cancelSink cancels the load's context at its first write.
type cancelSink struct {
	memSink
	cancel context.CancelFunc
}

func (c *cancelSink) WriteEntities(ctx context.Context, es []kg.Entity) error {
	c.cancel()
	return c.memSink.WriteEntities(ctx, es)
}

func TestLoadHonoursContext(t *testing.T) {
	path := samplePath(t)
	ctx, cancel := context.WithCancel(context.Background())
	s := &cancelSink{cancel: cancel}
	_, err := Load(ctx, path, s, Options{Workers: 2})
	if !errors.Is(err, context.Canceled) || s.closed != 1 {
		t.Fatalf("err = %v, closed %d", err, s.closed)
	}
	if len(s.ents) >= 49 {
		t.Fatalf("all %d entities loaded after cancellation", len(s.ents))
	}
}
