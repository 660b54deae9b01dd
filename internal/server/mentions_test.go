package server_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/docstore"
	"github.com/dmar-kg/dmar/internal/kg/memkg"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/retrieval/memindex"
	"github.com/dmar-kg/dmar/internal/server"
)

// memoServer is a server whose index holds only the documents sent to it
// (none is an entity's page), over the codexm-film graph; withMentions
// gives the pipeline and the store the mention index.
func memoServer(t *testing.T, withMentions bool) *server.Server {
	t.Helper()
	router(t)
	ctx := context.Background()
	x := memindex.New(memindex.DefaultParams())
	mx := memkg.NewMentions(testGraph)
	cfg := docstore.Config{Dir: t.TempDir(), Index: x, Graph: testGraph, KGKey: "film", Encoder: letterEncoder{}, Replay: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	pc := pipeline.Config{Graph: testGraph, Index: x, Encoder: letterEncoder{}}
	if withMentions {
		cfg.Mentions, pc.Mentions = mx, mx
	}
	st, err := docstore.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	p, err := pipeline.New(pc)
	if err != nil {
		t.Fatal(err)
	}
	return server.New(server.Config{Pipeline: p, Documents: st})
}

// The memos' ids are not QIDs and they share no word with the question:
// only the graph can bring them in, through the films they mention.
const memos = `{"documents": [
 {"id": "memo-17", "title": "Quarterly screening notes", "text": "The Prestige drew a full house on Friday. Members asked for a second showing."},
 {"id": "memo-18", "title": "Batman Begins", "text": "Tickets sold out within an hour."},
 {"id": "memo-19", "title": "Catering", "text": "Sandwiches and coffee were served. Nothing else happened."}]}`

// graphDocs are the results the graph channel brought in, by id.
func graphDocs(t *testing.T, h *server.Server) map[string]api.Doc {
	t.Helper()
	w := do(t, h, "POST", "/v1/retrieve", `{"query": "Which films did Christopher Nolan direct?", "k": 3, "p": 20, "graph_recall": 1, "graph_mentions": 1, "graph_boost": 100}`)
	if w.Code != 200 {
		t.Fatalf("retrieve: %d %s", w.Code, w.Body)
	}
	out := map[string]api.Doc{}
	for _, d := range decodeInto[api.RetrieveResponse](t, w.Body.Bytes()).Results {
		if d.Breakdown.Source == "kg" {
			out[d.ID] = d
		}
	}
	return out
}

// A user's documents sent through PUT /v1/documents get the graph's help:
// the channel reaches them through the entities they mention, says which
// and where, and follows their updates and deletions.
func TestUserDocumentsReachedThroughMentions(t *testing.T) {
	h := memoServer(t, true)
	if w := do(t, h, "PUT", "/v1/documents", memos); w.Code != 200 {
		t.Fatalf("put: %d %s", w.Code, w.Body)
	}
	got := graphDocs(t, h)
	for id, want := range map[string]struct{ entity, place string }{"memo-17": {"Q46551", "first sentence"}, "memo-18": {"Q166262", "title"}} {
		d, ok := got[id]
		if !ok {
			t.Fatalf("%s is not among the graph channel's results: %v", id, got)
		}
		b := d.Breakdown.Graph.Bridge
		if b == nil || b.Entity != want.entity || b.Place != want.place || !strings.HasPrefix(d.Breakdown.Graph.Path, "Q25191 -[") {
			t.Errorf("%s: graph %+v bridge %+v, want Nolan's path to %s, mentioned in the %s", id, d.Breakdown.Graph, b, want.entity, want.place)
		}
		named := false
		for _, p := range d.Breakdown.Paths {
			named = named || (p.From == "Q25191" && p.To == want.entity && strings.Contains(p.Text, "Nolan"))
		}
		if !named {
			t.Errorf("%s: the named paths %+v do not name Nolan's path to %s", id, d.Breakdown.Paths, want.entity)
		}
	}
	if _, ok := got["memo-19"]; ok {
		t.Error("memo-19 mentions no film but the graph channel reached it")
	}
	if got["memo-18"].Breakdown.Graph.Relevance <= got["memo-17"].Breakdown.Graph.Relevance {
		t.Errorf("a title mention (%.3f) does not outweigh a first-sentence one (%.3f)", got["memo-18"].Breakdown.Graph.Relevance, got["memo-17"].Breakdown.Graph.Relevance)
	}
	// memo-17 no longer names the film; memo-18 is deleted.
	do(t, h, "PUT", "/v1/documents", `{"documents": [{"id": "memo-17", "title": "Quarterly screening notes", "text": "A full house on Friday."}]}`)
	do(t, h, "DELETE", "/v1/documents/memo-18", "")
	if got := graphDocs(t, h); len(got) != 0 {
		t.Errorf("after the update and the delete the graph channel still reaches %v", got)
	}
}

// Without the mention index the same documents get nothing from the graph.
func TestUserDocumentsWithoutMentionIndex(t *testing.T) {
	h := memoServer(t, false)
	if w := do(t, h, "PUT", "/v1/documents", memos); w.Code != 200 {
		t.Fatalf("put: %d %s", w.Code, w.Body)
	}
	if got := graphDocs(t, h); len(got) != 0 {
		t.Errorf("without a mention index the graph channel reached %v", got)
	}
}
