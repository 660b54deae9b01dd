package memkg_test

import (
	"context"
	"testing"

	"github.com/dmar-kg/dmar/internal/kg/memkg"
	"github.com/dmar-kg/dmar/internal/mentions"
	"github.com/dmar-kg/dmar/internal/mentions/mentionstest"
	"github.com/dmar-kg/dmar/internal/retrieval"
)

func TestMentionsConformance(t *testing.T) {
	g, _ := load(t, "codexm-film")
	mentionstest.Run(t, memkg.NewMentions(g))
}

// The mentions of a document are located by linking its title and first
// sentence with the graph the corpus was linked with.
func TestLocate(t *testing.T) {
	g, _ := load(t, "codexm-film")
	ctx := context.Background()
	d := retrieval.Document{ID: "p1", Title: "Inception",
		Text: "Inception is a 2010 film written and directed by Christopher Nolan. It was shot in Canada."}
	ms, err := g.Link(ctx, d.Title+"\n"+d.Text)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		d.Entities = append(d.Entities, m.QID)
	}
	got, err := mentions.Locate(ctx, g, d)
	if err != nil {
		t.Fatal(err)
	}
	at := map[string]mentions.Place{}
	for _, e := range got.Mentions {
		at[e.QID] = e.Place
	}
	want := map[string]mentions.Place{mentionstest.Inception: mentions.Title, mentionstest.Nolan: mentions.Lead, mentionstest.Canada: mentions.Body}
	for q, p := range want {
		if at[q] != p {
			t.Errorf("%s at %v, want %v (all: %v)", q, at[q], p, got.Mentions)
		}
	}
}
