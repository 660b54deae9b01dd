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
	name   string
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
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("openie %s: %w", path, err)
	}
	if len(f.Docs) == 0 {
		return nil, fmt.Errorf("openie %s: no docs", path)
	}
	o := &OpenIE{byText: make(map[string]Extraction, len(f.Docs)), name: "openie:" + path}
	for _, d := range f.Docs {
		var ex Extraction
		seen := map[string]bool{}
		add := func(s string, k Kind) {
			if key := Key(s); key != "" && !seen[key] {
				seen[key] = true
				ex.Phrases = append(ex.Phrases, Phrase{Text: strings.TrimSpace(s), Kind: k})
			}
		}
		for _, e := range d.Entities {
			add(e, Named)
		}
		for _, t := range d.Triples {
			if len(t) != 3 || Key(t[0]) == "" || Key(t[2]) == "" {
				continue // the file holds a few malformed triples
			}
			add(t[0], Noun)
			add(t[2], Noun)
			ex.Triples = append(ex.Triples, Triple{Subject: t[0], Relation: t[1], Object: t[2]})
		}
		o.byText[d.Title+"\x00"+d.Text] = ex
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

// Has reports whether the file holds the passage.
func (o *OpenIE) Has(p Passage) bool {
	_, ok := o.byText[p.Title+"\x00"+p.Text]
	return ok
}
