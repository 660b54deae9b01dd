package server_test

import (
	"fmt"
	"strings"
	"testing"
)

// A body over its route's limit is refused with 413 naming the limit and
// the field the limit fell in, where the body shows it.
func TestOversizedBodyNamesField(t *testing.T) {
	h := router(t)
	big := strings.Repeat("x", 70_000)
	for _, c := range []struct {
		path, body, field string
	}{
		{"/v1/retrieve", fmt.Sprintf(`{"query": %q}`, big), "query"},
		{"/v1/retrieve", fmt.Sprintf(`{"k": 3, "filter": {"ids": ["Q25188", %q]}, "query": "Inception"}`, big), "filter.ids[1]"},
		{"/v1/link", fmt.Sprintf(`{"text": %q}`, big), "text"},
		{"/v1/retrieve", "[" + strings.Repeat(`"a",`, 20_000) + `"a"]`, "[16384]"},
	} {
		w := do(t, h, "POST", c.path, c.body)
		e := errorOf(t, w)
		if w.Code != 413 || e.Field != c.field || !strings.Contains(e.Message, "65536 bytes") || !strings.Contains(e.Message, "cut off inside "+c.field) {
			t.Errorf("%s %.40s...: %d %+v, want 413 naming 65536 and %s", c.path, c.body, w.Code, e, c.field)
		}
	}
}

// An empty filter list is refused, naming it: it would match no document,
// and taking it as no filter would return documents the caller excluded.
func TestEmptyFilterListRefused(t *testing.T) {
	h := router(t)
	for _, field := range []string{"ids", "any_entities"} {
		w := do(t, h, "POST", "/v1/retrieve", fmt.Sprintf(`{"query": "Inception", "filter": {%q: []}}`, field))
		if e := errorOf(t, w); w.Code != 400 || e.Field != "filter."+field || !strings.Contains(e.Message, "match no document") {
			t.Errorf("filter.%s []: %d %+v", field, w.Code, e)
		}
	}
	if w := do(t, h, "POST", "/v1/retrieve", `{"query": "Inception", "k": 2, "filter": {"ids": ["Q25188"]}}`); w.Code != 200 || !strings.Contains(w.Body.String(), `"Q25188"`) {
		t.Errorf("filter.ids [Q25188]: %d %.200s", w.Code, w.Body)
	}
}
