package docstore_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dmar-kg/dmar/internal/docstore"
	"github.com/dmar-kg/dmar/internal/docstore/docstoretest"
	"github.com/dmar-kg/dmar/internal/kg/memkg"
	"github.com/dmar-kg/dmar/internal/mentions"
	"github.com/dmar-kg/dmar/internal/retrieval/memindex"
)

// mentioning are the documents that mention qid in ix, with their places.
func mentioning(t *testing.T, ix *memkg.Mentions, qid string) []mentions.Mention {
	t.Helper()
	f, err := ix.Mentioning(context.Background(), []string{qid}, 100)
	if err != nil {
		t.Fatal(err)
	}
	return f.Docs[qid]
}

// openWithMentions is open with a mention index built from the base
// corpus, as dmar serve builds it before the store replays its log.
func openWithMentions(t *testing.T, dir string) (*docstore.Store, *memkg.Mentions) {
	t.Helper()
	ctx := context.Background()
	g := docstoretest.Graph()
	x := memindex.New(memindex.DefaultParams())
	b := base()
	b[0].Entities = []string{"Q84"}
	if err := x.Put(ctx, b); err != nil {
		t.Fatal(err)
	}
	ix := memkg.NewMentions(g)
	ms, err := mentions.LocateAll(ctx, g, b)
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Replace(ctx, ms); err != nil {
		t.Fatal(err)
	}
	return openStore(t, dir, x, g, func(cfg *docstore.Config) { cfg.Mentions = ix }), ix
}

// write puts in, then deletes ids, failing the test on an error.
func write(t *testing.T, s *docstore.Store, in []docstore.Input, ids ...string) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.Put(ctx, in); err != nil {
		t.Fatal(err)
	}
	if len(ids) == 0 {
		return
	}
	if _, err := s.Delete(ctx, ids); err != nil {
		t.Fatal(err)
	}
}

// The mention index follows every write, and after a restart the log's
// outcome, corpus deletions included.
func TestMentionsFollowWrites(t *testing.T) {
	dir := t.TempDir()
	s, ix := openWithMentions(t, dir)
	write(t, s, []docstore.Input{
		{ID: "p1", Title: "Inception", Text: "A film by Christopher Nolan. Shot in London."},
		{ID: "p2", Title: "Notes", Text: "Nolan again."},
	})
	want := []mentions.Mention{{Doc: "p1", Place: mentions.Lead}, {Doc: "p2", Place: mentions.Lead}}
	if diff := cmp.Diff(want, mentioning(t, ix, "Q25191")); diff != "" {
		t.Errorf("Nolan after the put (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]mentions.Mention{{Doc: "p1", Place: mentions.Title}}, mentioning(t, ix, "Q25188")); diff != "" {
		t.Errorf("Inception after the put (-want +got):\n%s", diff)
	}
	// p1 no longer names Nolan; the corpus's c1 is deleted.
	write(t, s, []docstore.Input{{ID: "p1", Title: "Inception", Text: "A film. Shot in London."}}, "c1")
	check := func(when string) {
		t.Helper()
		if diff := cmp.Diff([]mentions.Mention{{Doc: "p2", Place: mentions.Lead}}, mentioning(t, ix, "Q25191")); diff != "" {
			t.Errorf("%s: Nolan (-want +got):\n%s", when, diff)
		}
		if diff := cmp.Diff([]mentions.Mention{{Doc: "p1", Place: mentions.Body}}, mentioning(t, ix, "Q84")); diff != "" {
			t.Errorf("%s: London, c1 deleted (-want +got):\n%s", when, diff)
		}
		if ix.Len() != 2 {
			t.Errorf("%s: %d documents indexed, want 2", when, ix.Len())
		}
	}
	check("after the writes")
	s.Close()
	s, ix = openWithMentions(t, dir)
	defer s.Close()
	check("after a restart")
}
