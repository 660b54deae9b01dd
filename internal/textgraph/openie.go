package textgraph

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// OpenIE is a peer's extraction read from a file: HippoRAG's OpenIE output
// ({docs: [{title, text, extracted_entities, extracted_triples}]}, as
// ../shared/data/musique-100 holds the one gpt-3.5-turbo-1106 made of that
// corpus). A passage is matched by its title and text; a passage the file
// does not hold has no phrases. It is for measuring: running the peer's
// recipe on the peer's own graph, and how close an extractor that runs
// here comes to it; no user's documents are in such a file.
type OpenIE struct {
	byText map[string]Extraction
	gold   map[string]Gold
	name   string
}

// Gold is what a peer's extraction found in one passage, as phrase keys
// (Key): its named entities and its triples' subjects and objects.
type Gold struct {
	Entities, Arguments map[string]bool
}

// ReadOpenIE reads the file at path.
func ReadOpenIE(path string) (*OpenIE, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("openie: %w", err)
	}
	var f struct {
		Docs []struct {
			Title    string     `json:"title"`
			Text     string     `json:"text"`
			Entities []string   `json:"extracted_entities"`
			Triples  [][]string `json:"extracted_triples"`
		} `json:"docs"`
	}
	if err := json.Unmarshal(pythonNaNs(b), &f); err != nil {
		return nil, fmt.Errorf("openie %s: %w", path, err)
	}
	if len(f.Docs) == 0 {
		return nil, fmt.Errorf("openie %s: no docs", path)
	}
	o := &OpenIE{byText: make(map[string]Extraction, len(f.Docs)), gold: make(map[string]Gold, len(f.Docs)), name: "openie:" + path}
	for _, d := range f.Docs {
		var ex Extraction
		g := Gold{Entities: map[string]bool{}, Arguments: map[string]bool{}}
		seen := map[string]bool{}
		add := func(s string, k Kind) {
			if key := Key(s); key != "" && !seen[key] {
				seen[key] = true
				ex.Phrases = append(ex.Phrases, Phrase{Text: strings.TrimSpace(s), Kind: k})
			}
		}
		for _, e := range d.Entities {
			add(e, Named)
			if k := Key(e); k != "" {
				g.Entities[k] = true
			}
		}
		for _, t := range d.Triples {
			if len(t) != 3 || Key(t[0]) == "" || Key(t[2]) == "" {
				continue // the file holds a few malformed triples
			}
			add(t[0], Noun)
			add(t[2], Noun)
			g.Arguments[Key(t[0])], g.Arguments[Key(t[2])] = true, true
			ex.Triples = append(ex.Triples, Triple{Subject: t[0], Relation: t[1], Object: t[2]})
		}
		o.byText[d.Title+"\x00"+d.Text] = ex
		o.gold[d.Title+"\x00"+d.Text] = g
	}
	return o, nil
}

// Name implements Extractor.
func (o *OpenIE) Name() string { return o.name }

// Len is the number of passages the file holds.
func (o *OpenIE) Len() int { return len(o.byText) }

// Extract implements Extractor.
func (o *OpenIE) Extract(ctx context.Context, ps []Passage) ([]Extraction, error) {
	out := make([]Extraction, len(ps))
	for i, p := range ps {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out[i] = o.byText[p.Title+"\x00"+p.Text]
	}
	return out, nil
}

// GoldOf is the file's extraction of p as phrase keys; ok is false when
// the file does not hold p.
func (o *OpenIE) GoldOf(p Passage) (Gold, bool) {
	g, ok := o.gold[p.Title+"\x00"+p.Text]
	return g, ok
}

// pythonNaNs is b with the bare NaN, Infinity and -Infinity that Python's
// json module writes for floats (HippoRAG's files hold some) as null, so
// that a JSON decoder reads the rest; strings are left alone.
func pythonNaNs(b []byte) []byte {
	out := make([]byte, 0, len(b))
	inString, escaped := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			out = append(out, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		if c == '"' {
			inString = true
			out = append(out, c)
			continue
		}
		replaced := false
		for _, tok := range []string{"NaN", "-Infinity", "Infinity"} {
			if strings.HasPrefix(string(b[i:min(len(b), i+len(tok))]), tok) {
				out = append(out, "null"...)
				i += len(tok) - 1
				replaced = true
				break
			}
		}
		if !replaced {
			out = append(out, c)
		}
	}
	return out
}
