package wikidata

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/loaders/bundlesink"
	"github.com/dmar-kg/dmar/loaders/neo4jcsv"
)

// gzipBytes compresses b.
func gzipBytes(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// corruptGzip writes the sample gzipped with one byte in the middle of the
// compressed data flipped.
func corruptGzip(t *testing.T, raw []byte, dir string) string {
	t.Helper()
	gz := gzipBytes(t, raw)
	gz[len(gz)/2] ^= 0x55
	p := filepath.Join(dir, "corrupt.json.gz")
	if err := os.WriteFile(p, gz, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// readDir returns every file of dir (hidden ones included) with its bytes.
func readDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

func names(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestFailedLoadKeepsPreviousOutput loads the sample into each file sink,
// then runs loads that fail into the same directory: the good output stays
// byte-identical and no temporary file is left behind.
func TestFailedLoadKeepsPreviousOutput(t *testing.T) {
	path := samplePath(t)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	corrupt := corruptGzip(t, raw, tmp)
	sinks := map[string]func(dir string) (kg.Sink, error){
		"csv": func(dir string) (kg.Sink, error) {
			return neo4jcsv.New(dir, neo4jcsv.Options{UniqueTriples: true})
		},
		"bundle": func(dir string) (kg.Sink, error) { return bundlesink.New(dir), nil },
	}
	type failure struct {
		path string
		o    Options
		ctx  func() context.Context
	}
	failures := map[string]failure{
		"missing dump":       {path: filepath.Join(tmp, "no-such-dump.json")},
		"bad seed":           {path: path, o: Options{Seeds: []string{"not a qid"}}},
		"missing properties": {path: path, o: Options{PropertiesTSV: filepath.Join(tmp, "no-such.tsv")}},
		"cancelled": {path: path, ctx: func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}},
		"corrupt gzip go": {path: corrupt, o: Options{Decompress: "go"}},
	}
	if hasTool(corrupt) {
		failures["corrupt gzip external"] = failure{path: corrupt, o: Options{Decompress: "external"}}
	}
	for sname, open := range sinks {
		dir := filepath.Join(tmp, sname)
		s, err := open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Load(context.Background(), path, s, Options{Workers: 2}); err != nil {
			t.Fatal(err)
		}
		good := readDir(t, dir)
		for fname, f := range failures {
			t.Run(sname+" "+fname, func(t *testing.T) {
				s, err := open(dir)
				if err != nil {
					t.Fatal(err)
				}
				ctx := context.Background()
				if f.ctx != nil {
					ctx = f.ctx()
				}
				f.o.Workers = 2
				if _, err := Load(ctx, f.path, s, f.o); err == nil {
					t.Fatal("the load did not fail")
				}
				got := readDir(t, dir)
				if !reflect.DeepEqual(names(got), names(good)) {
					t.Fatalf("files %v after the failed load, want %v", names(got), names(good))
				}
				for n := range good {
					if got[n] != good[n] {
						t.Errorf("%s changed: %d bytes, was %d", n, len(got[n]), len(good[n]))
					}
				}
			})
		}
	}
}

// TestLoadCorruptCompressedIsAnError: a checksum failure, corrupt data or
// trailing garbage after the compressed stream fails the load, with Go's
// readers and the external ones; only a true end of file is "cut off".
func TestLoadCorruptCompressedIsAnError(t *testing.T) {
	path := samplePath(t)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gz := gzipBytes(t, raw)
	files := map[string][]byte{}
	mid := append([]byte(nil), gz...)
	mid[len(mid)/2] ^= 0x55
	files["gzip corrupt byte.json.gz"] = mid
	crc := append([]byte(nil), gz...)
	crc[len(crc)-8] ^= 0x01 // the CRC-32 of the trailer
	files["gzip bad checksum.json.gz"] = crc
	files["gzip short garbage.json.gz"] = append(append([]byte(nil), gz...), "garbage!"...)
	files["gzip long garbage.json.gz"] = append(append([]byte(nil), gz...), "garbage after the stream, quite long\n"...)
	if _, err := exec.LookPath("bzip2"); err == nil {
		bz, err := exec.Command("bzip2", "-c", path).Output()
		if err != nil {
			t.Fatal(err)
		}
		c := append([]byte(nil), bz...)
		c[len(c)/2] ^= 0x55
		files["bzip2 corrupt byte.json.bz2"] = c
		files["bzip2 garbage.json.bz2"] = append(append([]byte(nil), bz...), "garbage!"...)
	}
	for name, b := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, mode := range []string{"go", "external"} {
			t.Run(name+" "+mode, func(t *testing.T) {
				skipWithoutTool(t, p, mode)
				st, err := Load(context.Background(), p, &memSink{}, Options{Decompress: mode, Workers: 2})
				if err == nil {
					t.Fatalf("loaded without error: truncated %v (%s), %+v", st.Truncated, st.TruncatedBy, st.Counts)
				}
				t.Log(err)
			})
		}
	}
}

// TestLoadCutOffReportsLastEntity: a gzip stream cut off at the end of the
// file loads what came before and names the last complete entity with its
// byte offset; a multi-member gzip (pigz, bgzip, cat a.gz b.gz) loads whole.
func TestLoadCutOffReportsLastEntity(t *testing.T) {
	path := samplePath(t)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gz := gzipBytes(t, raw)
	cut := filepath.Join(dir, "cut.json.gz")
	if err := os.WriteFile(cut, gz[:len(gz)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	want, _ := load(t, path, Options{})
	for _, mode := range []string{"go", "external"} {
		t.Run(mode, func(t *testing.T) {
			skipWithoutTool(t, cut, mode)
			s, st := load(t, cut, Options{Decompress: mode, Workers: 2, AllowTruncated: true})
			if !st.Truncated || len(s.ents) == 0 {
				t.Fatalf("not truncated: %+v", st)
			}
			last := s.ents[len(s.ents)-1].QID
			if st.LastEntity != last {
				t.Fatalf("last entity %q, want %q", st.LastEntity, last)
			}
			// The offset starts that entity's line in the uncompressed dump.
			if st.LastEntityAt <= 0 || raw[st.LastEntityAt-1] != '\n' ||
				!bytes.HasPrefix(raw[st.LastEntityAt:], []byte(`{"type":"item","id":"`+last+`"`)) {
				t.Fatalf("last entity at %d: %.60q", st.LastEntityAt, raw[st.LastEntityAt:])
			}
			if !strings.Contains(st.TruncatedBy, last) || !strings.Contains(st.TruncatedBy, fmt.Sprint(st.LastEntityAt)) {
				t.Fatalf("truncated by %q names neither %s nor its offset", st.TruncatedBy, last)
			}
		})
	}
	// Two gzip members, split at a line: the whole dump.
	nl := bytes.IndexByte(raw[len(raw)/2:], '\n') + len(raw)/2 + 1
	multi := filepath.Join(dir, "multi.json.gz")
	if err := os.WriteFile(multi, append(gzipBytes(t, raw[:nl]), gzipBytes(t, raw[nl:])...), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"go", "external"} {
		t.Run("multi "+mode, func(t *testing.T) {
			skipWithoutTool(t, multi, mode)
			s, st := load(t, multi, Options{Decompress: mode, Workers: 2})
			if st.Truncated || !reflect.DeepEqual(s.ents, want.ents) || !reflect.DeepEqual(s.triples, want.triples) {
				t.Fatalf("multi-member gzip: %+v", st)
			}
		})
	}
}

// TestLoadFramingEdgeCases: the dump framing variants that real files and
// hand-made samples use all load every entity; an entity without a type is
// bad, naming the field.
func TestLoadFramingEdgeCases(t *testing.T) {
	path := samplePath(t)
	want, _ := load(t, path, Options{})
	var ents []string // the entity JSON objects of the sample, in order
	for _, l := range sampleLines(t) {
		ents = append(ents, string(l))
	}
	lines := func(ls ...string) string { return strings.Join(ls, "\n") + "\n" }
	standard := lines(append(append([]string{"["}, commaJoin(ents)...), "]")...)
	cases := map[string]string{
		"standard":                        standard,
		"BOM before [":                    "\ufeff" + standard,
		"[ on the first entity":           lines(append([]string{"[" + commaJoin(ents)[0]}, append(commaJoin(ents)[1:], "]")...)...),
		"] on the last entity":            lines(append([]string{"["}, append(commaJoin(ents)[:len(ents)-1], ents[len(ents)-1]+"]")...)...),
		"one-line array":                  "[" + strings.Join(ents, ",") + "]\n",
		"one-line array, BOM, no newline": "\ufeff[" + strings.Join(ents, ", ") + "]",
		"two entities a line":             lines(append(append([]string{"["}, pairs(ents)...), "]")...),
	}
	dir := t.TempDir()
	for name, dump := range cases {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".json")
			if err := os.WriteFile(p, []byte(dump), 0o644); err != nil {
				t.Fatal(err)
			}
			s, st := load(t, p, Options{Workers: 2})
			if st.Read != 49 || st.Loaded != 49 || st.Bad != 0 {
				t.Fatalf("counts %+v, want 49 read and loaded", st.Counts)
			}
			if !reflect.DeepEqual(s.ents, want.ents) || !reflect.DeepEqual(s.triples, want.triples) {
				t.Fatal("loaded a different graph than the standard framing")
			}
		})
	}
	t.Run("one-line array with a bad entity", func(t *testing.T) {
		bad := `{"type":"item","id":"Q7","labels":{"en":{"value":6}}}`
		bad2 := `{"type":"item","id":"Q7","labels":{"en":{"value":5}}}`
		in := append(append(append(append([]string{bad}, ents[:5]...), `{"type":"item","id":"Q01"}`), ents[5:9]...), bad2)
		in = append(in, ents[9:]...)
		dump := "[" + strings.Join(in, ",") + "]\n"
		p := filepath.Join(dir, "one-line-bad.json")
		if err := os.WriteFile(p, []byte(dump), 0o644); err != nil {
			t.Fatal(err)
		}
		s, st := load(t, p, Options{Workers: 2})
		if st.Read != 52 || st.Loaded != 49 || st.Bad != 3 || !reflect.DeepEqual(s.ents, want.ents) {
			t.Fatalf("counts %+v", st.Counts)
		}
		for i, b := range []string{bad, `{"type":"item","id":"Q01"}`, bad2} {
			off := strings.Index(dump, b)
			if !strings.HasPrefix(st.Problems[i], fmt.Sprintf("byte %d: ", off)) {
				t.Fatalf("problem %q, want byte %d", st.Problems[i], off)
			}
		}
	})
	t.Run("missing type", func(t *testing.T) {
		p := filepath.Join(dir, "notype.json")
		if err := os.WriteFile(p, []byte(lines("[", `{"id":"Q5"},`, ents[0], "]")), 0o644); err != nil {
			t.Fatal(err)
		}
		_, st := load(t, p, Options{})
		if st.Bad != 1 || st.Loaded != 1 || !strings.Contains(st.Problems[0], `"type"`) {
			t.Fatalf("counts %+v", st.Counts)
		}
	})
	t.Run("type does not match the id", func(t *testing.T) {
		p := filepath.Join(dir, "mismatch.json")
		if err := os.WriteFile(p, []byte(lines("[", `{"type":"property","id":"Q5"},`, ents[0], "]")), 0o644); err != nil {
			t.Fatal(err)
		}
		_, st := load(t, p, Options{})
		if st.Bad != 1 || st.Loaded != 1 || !strings.Contains(st.Problems[0], `type`) {
			t.Fatalf("counts %+v", st.Counts)
		}
	})
}

// commaJoin returns the lines of a dump body: each entity with a trailing
// comma but the last.
func commaJoin(ents []string) []string {
	out := make([]string, len(ents))
	for i, e := range ents {
		out[i] = e
		if i < len(ents)-1 {
			out[i] += ","
		}
	}
	return out
}

// pairs puts two entities on each line.
func pairs(ents []string) []string {
	var out []string
	for i := 0; i < len(ents); i += 2 {
		l := ents[i]
		if i+1 < len(ents) {
			l += "," + ents[i+1]
		}
		if i+2 < len(ents) {
			l += ","
		}
		out = append(out, l)
	}
	return out
}

// TestLoadRepeatedPropertyKeepsTheFirst: a property entity repeated in the
// dump is handled like a repeated item: the first stands, the repeat is
// filtered, and relations are counted once.
func TestLoadRepeatedPropertyKeepsTheFirst(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "props.json")
	if err := os.WriteFile(p, []byte("[\n"+
		`{"type":"property","id":"P31","labels":{"en":{"value":"instance of"}}},`+"\n"+
		`{"type":"property","id":"P31","labels":{"en":{"value":"EVIL"}}},`+"\n"+
		`{"type":"item","id":"Q1","labels":{"en":{"value":"universe"}}}`+"\n]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, st := load(t, p, Options{})
	if len(s.rels) != 1 || s.rels[0].Label != "instance of" || st.Relations != 1 || st.Filtered != 1 || st.Loaded != 2 {
		t.Fatalf("rels %+v, stats %+v", s.rels, st)
	}
}

// TestLoadPropertiesFileMissingOrEmpty: a configured relation-labels file
// that is missing, empty or holds no PID<TAB>label line fails the load,
// naming the file, instead of silently loading 0 relations.
func TestLoadPropertiesFileMissingOrEmpty(t *testing.T) {
	path := samplePath(t)
	dir := t.TempDir()
	files := map[string]string{
		"empty.tsv":     "",
		"blank.tsv":     "\n\n",
		"wrong.tsv":     "P31,instance of\nP17,country\n",
		"no-labels.tsv": "P31\t\nP17\t \n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files["missing.tsv"] = ""
	for name := range files {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, name)
			_, err := Load(context.Background(), path, &memSink{}, Options{PropertiesTSV: p})
			if err == nil || !strings.Contains(err.Error(), p) {
				t.Fatalf("err = %v, want one naming %s", err, p)
			}
		})
	}
	good := filepath.Join(dir, "good.tsv")
	if err := os.WriteFile(good, []byte("P31\tinstance of\nnot a pid\tx\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rels, err := ReadPropertiesTSV(good)
	if err != nil || len(rels) != 1 {
		t.Fatalf("good file: %v, %v", rels, err)
	}
}

// FuzzParseRef checks that splitting a line into entities never panics,
// that every result's offset lies inside the line, and that a line of
// entities joined by commas (with or without brackets) gives one result each.
func FuzzParseRef(f *testing.F) {
	for _, s := range []string{
		`[{"type":"item","id":"Q1"},{"type":"item","id":"Q2"}]`,
		`{"type":"item","id":"Q1"},`,
		"\ufeff[",
		`[{"type":"item","id":"Q1","labels":{"en":{"value":5}}},{"type":"item","id":"Q2"}],`,
		`],`, `[]`, `,`, `{"id":"Q5"}`,
	} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, line []byte, last bool) {
		out := parseRef(nil, line, lineRef{off: 0, last: last}, nil)
		if len(out) == 0 {
			t.Fatal("no result")
		}
		for _, r := range out {
			if r.off < 0 || r.off > int64(len(line)) {
				t.Fatalf("offset %d outside the line of %d bytes", r.off, len(line))
			}
			if r.framing && len(out) != 1 {
				t.Fatal("a framing result beside others")
			}
		}
	})
}

// TestCutOffDumpKeepsPreviousOutput is issue 34's case: over a good
// 49-entity bundle, a load of the sample gzipped or bzip2ed and cut at 60%
// (or of the plain sample, which ends before its closing ']') used to exit
// 0 and replace the bundle with the 21-24 entities before the cut. It now
// fails, naming the cut, and the bundle stays as it was; AllowTruncated
// loads what came before the cut, with the statistics saying where.
func TestCutOffDumpKeepsPreviousOutput(t *testing.T) {
	closed := samplePath(t)
	raw, err := os.ReadFile(rawSamplePath(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	if _, err := Load(context.Background(), closed, bundlesink.New(out), Options{Workers: 2}); err != nil {
		t.Fatal(err)
	}
	good := readDir(t, out)
	gz := gzipBytes(t, raw)
	cuts := map[string][]byte{"gzip cut at 60%.json.gz": gz[:len(gz)*6/10]}
	if _, err := exec.LookPath("bzip2"); err == nil {
		bz, err := exec.Command("bzip2", "-c", rawSamplePath(t)).Output()
		if err != nil {
			t.Fatal(err)
		}
		cuts["bzip2 cut at 60%.json.bz2"] = bz[:len(bz)*6/10]
	}
	paths := map[string]string{"plain without ']'": rawSamplePath(t)}
	for name, b := range cuts {
		paths[name] = filepath.Join(dir, name)
		if err := os.WriteFile(paths[name], b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, p := range paths {
		for _, o := range []Options{{Decompress: "go"}, {Decompress: "external"}, {Seeds: []string{"Q22"}, Hops: 1}} {
			t.Run(fmt.Sprintf("%s %s %v", name, o.Decompress, o.Seeds), func(t *testing.T) {
				skipWithoutTool(t, p, o.Decompress)
				o.Workers = 2
				st, err := Load(context.Background(), p, bundlesink.New(out), o)
				var te *TruncatedError
				if !errors.As(err, &te) || !st.Truncated || !strings.Contains(err.Error(), "--allow-truncated") || !strings.Contains(err.Error(), st.LastEntity) {
					t.Fatalf("a cut-off dump: %v (stats %+v)", err, st)
				}
				if got := readDir(t, out); !reflect.DeepEqual(got, good) {
					t.Fatalf("the earlier output changed: files %v", names(got))
				}
			})
		}
	}
	o := Options{Workers: 2, AllowTruncated: true}
	st, err := Load(context.Background(), paths["gzip cut at 60%.json.gz"], bundlesink.New(out), o)
	if err != nil || !st.Truncated || st.Loaded == 0 || st.Loaded >= 49 || st.LastEntity == "" {
		t.Fatalf("allowed: %+v, %v", st, err)
	}
	var note bytes.Buffer
	if err := st.Report(&note, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(note.String(), "cut off") || !strings.Contains(note.String(), st.LastEntity) {
		t.Errorf("report: %s", note.String())
	}
}
