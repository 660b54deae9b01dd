package server_test

import (
	"bytes"
	"encoding/json"
	"regexp"
	"testing"
	"unicode"

	"github.com/dmar-kg/dmar/internal/docstore"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/server"
)

// openAPIDoc is the OpenAPI document, decoded loosely.
func openAPIDoc(t *testing.T) map[string]any {
	t.Helper()
	var d map[string]any
	if err := json.Unmarshal(server.OpenAPI(), &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// at walks a decoded JSON document by keys and indexes.
func at(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

// The pattern the OpenAPI document gives a query or link text and the
// server's rule agree on every one-character text: the pattern is what a
// generated client or a contract tester checks, the rule what is enforced.
func TestVisibleTextPatternIsTheServersRule(t *testing.T) {
	d := openAPIDoc(t)
	// The first pattern is the visible character; the second, the length
	// after trimming (its {0,1998} is past Go's repeat limit: the contract
	// test checks it).
	pat, _ := at(d, "components", "schemas", "LinkRequest", "properties", "text", "allOf", 0, "pattern").(string)
	for _, s := range []string{"RetrieveRequest", "AnswerRequest"} {
		if p := at(d, "components", "schemas", s, "properties", "query", "allOf", 0, "pattern"); p != pat {
			t.Errorf("%s.query's pattern differs from LinkRequest.text's", s)
		}
	}
	// Go's regexp spells \uXXXX as \x{XXXX}.
	re, err := regexp.Compile(regexp.MustCompile(`\\u([0-9a-fA-F]{4})`).ReplaceAllString(pat, `\x{$1}`))
	if err != nil || pat == "" {
		t.Fatalf("pattern %q: %v", pat, err)
	}
	bad := 0
	for r := rune(0); r <= unicode.MaxRune && bad < 10; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		body, _ := json.Marshal(map[string]string{"text": string(r)})
		_, err := server.DecodeLink(bytes.NewReader(body))
		if accepted, matches := err == nil, re.MatchString(string(r)); accepted != matches {
			t.Errorf("U+%04X: the server accepts it %v, the pattern matches it %v", r, accepted, matches)
			bad++
		}
	}
}

// The subgraph route's parameters are bounded in the document as the
// server bounds them.
func TestSubgraphBoundsDocumented(t *testing.T) {
	params, _ := at(openAPIDoc(t), "paths", "/v1/entities/{qid}/subgraph", "get", "parameters").([]any)
	want := map[string]pipeline.SubgraphRange{"hops": pipeline.HopsRange, "limit": pipeline.MaxNodesRange, "hub_degree": pipeline.HubDegreeRange}
	for _, p := range params {
		name, _ := at(p, "name").(string)
		r, ok := want[name]
		if !ok {
			continue
		}
		delete(want, name)
		if lo, hi := at(p, "schema", "minimum"), at(p, "schema", "maximum"); lo != float64(r.Min) || hi != float64(r.Max) {
			t.Errorf("%s: documented [%v, %v], the server takes [%d, %d]", name, lo, hi, r.Min, r.Max)
		}
	}
	if len(want) > 0 {
		t.Errorf("parameters not documented: %v", want)
	}
}

// The pattern the OpenAPI document gives a document id and the store's id
// rule agree, for each character alone, leading, trailing and inside.
func TestDocumentIDPatternIsTheStoresRule(t *testing.T) {
	d := openAPIDoc(t)
	params, _ := at(d, "paths", "/v1/documents/{id}", "get", "parameters").([]any)
	pat, _ := at(params, 0, "schema", "pattern").(string)
	if p := at(d, "components", "schemas", "DeleteDocumentsRequest", "properties", "ids", "items", "pattern"); p != pat {
		t.Errorf("the ids of a batch delete have another pattern: %v", p)
	}
	re, err := regexp.Compile(regexp.MustCompile(`\\u([0-9a-fA-F]{4})`).ReplaceAllString(pat, `\x{$1}`))
	if err != nil || pat == "" {
		t.Fatalf("pattern %q: %v", pat, err)
	}
	limits := docstore.DefaultLimits()
	bad := 0
	for r := rune(0); r <= unicode.MaxRune && bad < 10; r++ {
		if r >= 0xD800 && r <= 0xDFFF || (r > 0xFFFF && r%97 != 0) {
			continue // every BMP character; a sample of the others
		}
		for _, id := range []string{string(r), string(r) + "a", "a" + string(r), "a" + string(r) + "a"} {
			_, why := limits.CheckID(id)
			if ok, matches := why == "", re.MatchString(id); ok != matches {
				t.Errorf("id %q: the store takes it %v, the pattern matches it %v", id, ok, matches)
				bad++
			}
		}
	}
}
