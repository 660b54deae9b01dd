package wikidata

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/datapath"
	"github.com/dmar-kg/dmar/internal/kg"
)

// refParse is ParseLine written the slow, obvious way with encoding/json. The
// fast scanner must agree with it on every line encoding/json accepts that
// has no duplicate keys and is not absurdly deep.
func refParse(line []byte, f *Filter) (Entity, error) {
	var top any
	if err := json.Unmarshal(line, &top); err != nil {
		return Entity{}, err
	}
	m, ok := top.(map[string]any)
	if !ok {
		return Entity{}, errors.New("not an object")
	}
	var e Entity
	str := func(v any) (string, error) {
		s, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("%v is not a string", v)
		}
		return s, nil
	}
	obj := func(v any, emptyArrayOK bool) (map[string]any, error) {
		switch x := v.(type) {
		case map[string]any:
			return x, nil
		case []any:
			if emptyArrayOK && len(x) == 0 {
				return map[string]any{}, nil
			}
		}
		return nil, fmt.Errorf("%v is not an object", v)
	}
	sawID := false
	if v, ok := m["id"]; ok {
		s, err := str(v)
		if err != nil {
			return Entity{}, err
		}
		e.ID, sawID = s, true
	}
	if v, ok := m["type"]; ok {
		s, err := str(v)
		if err != nil {
			return Entity{}, err
		}
		e.Type = s
	}
	langs := f.langs()
	valueOf := func(v any) (string, error) {
		o, err := obj(v, false)
		if err != nil {
			return "", err
		}
		if x, ok := o["value"]; ok {
			return str(x)
		}
		return "", nil
	}
	mono := func(key string) ([]string, error) {
		out := make([]string, len(langs))
		v, ok := m[key]
		if !ok {
			return out, nil
		}
		o, err := obj(v, true)
		if err != nil {
			return nil, err
		}
		for i, l := range langs {
			if x, ok := o[l]; ok {
				if out[i], err = valueOf(x); err != nil {
					return nil, err
				}
			}
		}
		return out, nil
	}
	labels, err := mono("labels")
	if err != nil {
		return Entity{}, err
	}
	descs, err := mono("descriptions")
	if err != nil {
		return Entity{}, err
	}
	aliases := make([][]string, len(langs))
	if v, ok := m["aliases"]; ok {
		o, err := obj(v, true)
		if err != nil {
			return Entity{}, err
		}
		for i, l := range langs {
			x, ok := o[l]
			if !ok {
				continue
			}
			arr, ok := x.([]any)
			if !ok {
				return Entity{}, errors.New("aliases not an array")
			}
			for _, a := range arr {
				s, err := valueOf(a)
				if err != nil {
					return Entity{}, err
				}
				aliases[i] = append(aliases[i], s)
			}
		}
	}
	claims := map[string][]candidate{}
	if v, ok := m["claims"]; ok {
		o, err := obj(v, true)
		if err != nil {
			return Entity{}, err
		}
		for pid, x := range o {
			if !kg.ValidPID(pid) || !f.allows([]byte(pid)) {
				continue
			}
			arr, ok := x.([]any)
			if !ok {
				return Entity{}, errors.New("claims not an array")
			}
			var cs []candidate
			for _, st := range arr {
				so, err := obj(st, false)
				if err != nil {
					return Entity{}, err
				}
				var c candidate
				var snaktype, qid string
				if r, ok := so["rank"]; ok {
					if c.rank, err = str(r); err != nil {
						return Entity{}, err
					}
				}
				if ms, ok := so["mainsnak"]; ok {
					mo, err := obj(ms, false)
					if err != nil {
						return Entity{}, err
					}
					if st, ok := mo["snaktype"]; ok {
						if snaktype, err = str(st); err != nil {
							return Entity{}, err
						}
					}
					if dv, ok := mo["datavalue"]; ok {
						do, err := obj(dv, false)
						if err != nil {
							return Entity{}, err
						}
						if vo, ok := do["value"].(map[string]any); ok {
							qid, _ = vo["id"].(string)
						}
					}
				}
				if snaktype == "value" && validItem(qid) {
					c.qid = qid
					cs = append(cs, c)
				}
			}
			claims[pid] = cs
		}
	}
	if !sawID || !ValidEntityID(e.ID) {
		return Entity{}, errors.New("bad id")
	}
	if e.ID[0] == 'Q' && !validItem(e.ID) {
		return Entity{}, errors.New("id out of range")
	}
	if _, ok := m["type"]; !ok {
		return Entity{}, errors.New("no type")
	}
	if e.Type != typeOfPrefix[e.ID[0]] {
		return Entity{}, errors.New("type does not match id")
	}
	e.Label = first(labels)
	e.Description = first(descs)
	e.Aliases = kg.CleanAliases(e.Label, aliases...)
	e.Claims = truthy(claims)
	return e, nil
}

// oracleFits reports whether refParse is a fair oracle for line: no
// duplicate keys (encoding/json keeps the last silently) and not deeper than
// the scanner's limit.
func oracleFits(line []byte) bool {
	d := json.NewDecoder(bytes.NewReader(line))
	type frame struct {
		obj    bool
		keys   map[string]bool
		wanted bool // next string token is a key
	}
	var stack []*frame
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return true
		}
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.obj && top.wanted {
			if k, ok := tok.(string); ok {
				if top.keys[k] {
					return false
				}
				top.keys[k] = true
				top.wanted = false
				continue
			}
		}
		if top != nil && top.obj {
			top.wanted = true // after a value comes a key
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{obj: true, keys: map[string]bool{}, wanted: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) > 0 && stack[len(stack)-1].obj {
				stack[len(stack)-1].wanted = true
			}
		}
		if len(stack) > maxDepth-2 {
			return false
		}
	}
}

func sampleLines(t testing.TB) [][]byte {
	t.Helper()
	dir, err := datapath.Dataset("wikidata-dump-sample")
	if err != nil {
		t.Skip("shared data not found:", err)
	}
	f, err := os.Open(filepath.Join(dir, "latest-all-first50.json"))
	if err != nil {
		t.Skip("dump sample not found:", err)
	}
	defer f.Close()
	var out [][]byte
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if raw := StripFraming(line); raw != nil {
			out = append(out, raw)
		}
		if err != nil {
			break
		}
	}
	return out
}

func TestParseLineMatchesEncodingJSONOnRealLines(t *testing.T) {
	lines := sampleLines(t)
	if len(lines) != 49 {
		t.Fatalf("sample has %d entity lines, want 49", len(lines))
	}
	filters := []*Filter{
		nil,
		{Languages: []string{"de", "fr", "en"}},
		{Languages: []string{"en"}, Properties: map[string]bool{"P31": true, "P17": true, "P150": true}},
	}
	claims := 0
	for _, f := range filters {
		for _, l := range lines {
			got, err := ParseLine(l, f)
			if err != nil {
				t.Fatalf("ParseLine: %v", err)
			}
			want, err := refParse(l, f)
			if err != nil {
				t.Fatalf("refParse: %v", err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: fast parser and encoding/json differ:\n got %+v\nwant %+v", want.ID, got, want)
			}
			claims += len(got.Claims)
		}
	}
	if claims == 0 {
		t.Fatal("no claims parsed from the real sample")
	}
}

func TestParseLine(t *testing.T) {
	const scot = `{"type":"item","id":"Q22","labels":{"en":{"language":"en","value":"Scotland"},"fr":{"language":"fr","value":"\u00c9cosse"}},` +
		`"descriptions":{"en":{"language":"en","value":"country, \"north\""}},` +
		`"aliases":{"en":[{"language":"en","value":"Alba"},{"language":"en","value":" Scotland "},{"language":"en","value":"Alba"}],"fr":[{"language":"fr","value":"Scotie"}]},` +
		`"claims":{"P31":[{"mainsnak":{"snaktype":"value","property":"P31","datavalue":{"value":{"entity-type":"item","numeric-id":6256,"id":"Q6256"},"type":"wikibase-entityid"}},"rank":"normal"},` +
		`{"mainsnak":{"snaktype":"value","datavalue":{"value":{"id":"Q3336843"}}},"rank":"preferred","qualifiers":{"P580":[{"x":[1,2.5e3,-1,true,false,null]}]}}],` +
		`"P17":[{"mainsnak":{"snaktype":"value","datavalue":{"value":{"id":"Q145"}}},"rank":"normal"},{"mainsnak":{"snaktype":"value","datavalue":{"value":{"id":"Q174193"}}},"rank":"deprecated"},` +
		`{"mainsnak":{"snaktype":"novalue"},"rank":"normal"},{"mainsnak":{"snaktype":"value","datavalue":{"value":{"id":"Q145"}}},"rank":"normal"}],` +
		`"P1082":[{"mainsnak":{"snaktype":"value","datavalue":{"value":{"amount":"+5"},"type":"quantity"}},"rank":"normal"}],` +
		`"P2":[{"mainsnak":{"snaktype":"value","datavalue":{"value":{"entity-type":"property","id":"P5"}}},"rank":"normal"}]},"sitelinks":{"enwiki":{"title":"Scotland"}}}`
	tests := []struct {
		name string
		line string
		f    *Filter
		want Entity
		err  string
	}{
		{name: "english, truthy", line: scot, want: Entity{ID: "Q22", Type: "item", Label: "Scotland", Description: `country, "north"`,
			Aliases: []string{"Alba"}, Claims: []Claim{{"P17", "Q145"}, {"P31", "Q3336843"}}}},
		{name: "french first", line: scot, f: &Filter{Languages: []string{"fr", "en"}}, want: Entity{ID: "Q22", Type: "item", Label: "Écosse",
			Description: `country, "north"`, Aliases: []string{"Scotie", "Alba", "Scotland"}, Claims: []Claim{{"P17", "Q145"}, {"P31", "Q3336843"}}}},
		{name: "property allow-list", line: scot, f: &Filter{Properties: map[string]bool{"P17": true}}, want: Entity{ID: "Q22", Type: "item",
			Label: "Scotland", Description: `country, "north"`, Aliases: []string{"Alba"}, Claims: []Claim{{"P17", "Q145"}}}},
		{name: "empty maps as arrays", line: `{"type":"property","id":"P31","labels":[],"descriptions":[],"aliases":[],"claims":[]}`,
			want: Entity{ID: "P31", Type: "property"}},
		{name: "no type", line: `{"id":"L7"}`, err: `missing field "type"`},
		{name: "type not the id's", line: `{"type":"item","id":"P7"}`, err: `does not match`},
		{name: "lexeme", line: `{"type":"lexeme","id":"L7"}`, want: Entity{ID: "L7", Type: "lexeme"}},
		{name: "surrogate pair", line: `{"type":"item","id":"Q1","labels":{"en":{"value":"\ud83c\udde7\ud83c\uddea x"}}}`, want: Entity{ID: "Q1", Type: "item", Label: "🇧🇪 x"}},
		{name: "cut off", line: scot[:len(scot)/2], err: "unexpected end"},
		{name: "cut off in string", line: `{"id":"Q1","labels":{"en":{"value":"Sco`, err: "unexpected end"},
		{name: "bad escape", line: `{"id":"Q1","labels":{"en":{"value":"\x"}}}`, err: "bad escape"},
		{name: "trailing data", line: `{"id":"Q1"} x`, err: "trailing data"},
		{name: "no id", line: `{"type":"item"}`, err: "bad entity id"},
		{name: "bad id", line: `{"id":"Q01"}`, err: "bad entity id"},
		{name: "label not a string", line: `{"id":"Q1","labels":{"en":{"value":5}}}`, err: "want"},
		{name: "statement not an object", line: `{"id":"Q1","claims":{"P31":[5]}}`, err: "not an object"},
		{name: "not json", line: `hello`, err: "want"},
		{name: "missing comma", line: `{"id":"Q1" "type":"item"}`, err: "want ','"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseLine([]byte(tt.line), tt.f)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
			if ref, err := refParse([]byte(tt.line), tt.f); err != nil || !reflect.DeepEqual(ref, got) {
				t.Fatalf("reference disagrees: %+v, %v", ref, err)
			}
		})
	}
}

func TestStripFraming(t *testing.T) {
	for in, want := range map[string]string{"[": "", "]": "", "  ": "", `{"id":"Q1"},`: `{"id":"Q1"}`, "{\"id\":\"Q1\"}\r": `{"id":"Q1"}`} {
		if got := string(StripFraming([]byte(in))); got != want {
			t.Errorf("StripFraming(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzParseLine checks that the scanner never panics and agrees with
// encoding/json wherever encoding/json is a fair oracle.
func FuzzParseLine(f *testing.F) {
	for _, s := range []string{
		`{"type":"item","id":"Q1","labels":{"en":{"language":"en","value":"universe"}},"claims":{"P31":[{"mainsnak":{"snaktype":"value","datavalue":{"value":{"id":"Q36906466"}}},"rank":"normal"}]}}`,
		`{"type":"property","id":"P31","labels":[],"aliases":{"en":[{"value":"is a"}]},"descriptions":{"en":{"value":"that \"class\""}}}`,
		`{"type":"item","id":"Q2","claims":{"P17":[{"mainsnak":{"snaktype":"value","datavalue":{"value":{"id":"Q3"}}},"rank":"preferred"},{"mainsnak":{"snaktype":"value","datavalue":{"value":{"id":"Q4"}}},"rank":"normal"}]}}`,
		`{"type":"item","id":"Q1","labels":{"en":{"value":"\ud83c\udde7\u00e9\n"}}}`,
		`{"type":"item","id":"Q1","x":[1,-2.5e+3,true,false,null,{"a":[]}]}`,
		`{"id":"Q1"}`,
		`[{"type":"item","id":"Q1"},{"type":"item","id":"Q2"}]`,
	} {
		f.Add([]byte(s))
	}
	filter := &Filter{Languages: []string{"en", "fr"}}
	f.Fuzz(func(t *testing.T, line []byte) {
		got, err := ParseLine(line, filter)
		want, rerr := refParse(line, filter)
		if rerr != nil || !oracleFits(line) {
			return
		}
		if err != nil {
			t.Fatalf("scanner rejects a line encoding/json accepts: %v\n%q", err, line)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("scanner and encoding/json differ on %q:\n got %+v\nwant %+v", line, got, want)
		}
	})
}

// BenchmarkParseLine compares the scanner with encoding/json (refParse) on
// the real sample's lines, in one run.
func BenchmarkParseLine(b *testing.B) {
	lines := sampleLines(b)
	var size int64
	for _, l := range lines {
		size += int64(len(l))
	}
	for _, bc := range []struct {
		name  string
		parse func([]byte, *Filter) (Entity, error)
	}{{"scanner", ParseLine}, {"encoding-json", refParse}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				for _, l := range lines {
					if _, err := bc.parse(l, nil); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
