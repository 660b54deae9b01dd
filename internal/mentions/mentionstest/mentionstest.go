// Package mentionstest is the conformance suite of the mentions port. Every
// backend runs it over a graph that holds the codexm-film entities (the
// embedded index in every go test, Neo4j when DMAR_NEO4J_URI names one); it
// writes documents whose IDs start with "mentionstest-", deletes them first
// and last, and counts the index's other documents as they were.
package mentionstest

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dmar-kg/dmar/internal/mentions"
)

// Entities of codexm-film the suite's documents mention.
const (
	Inception = "Q25188"
	Nolan     = "Q25191"
	Canada    = "Q16"
	Ireland   = "Q27"
	// Unknown is a QID no graph holds: its mentions are dropped.
	Unknown = "Q999999999999"
)

var ids = []string{"mentionstest-a", "mentionstest-b", "mentionstest-c", "mentionstest-d"}

// Run checks ix.
func Run(t *testing.T, ix mentions.Index) {
	t.Helper()
	ctx := context.Background()
	if err := ix.Delete(ctx, ids); err != nil {
		t.Fatalf("delete the suite's documents: %v", err)
	}
	t.Cleanup(func() {
		if err := ix.Delete(context.Background(), ids); err != nil {
			t.Errorf("delete the suite's documents: %v", err)
		}
	})
	before, err := ix.Mentioning(ctx, []string{Inception, Nolan, Canada, Ireland}, 1)
	if err != nil {
		t.Fatal(err)
	}
	docs := []mentions.Document{
		{ID: ids[0], Title: "A", Mentions: []mentions.Entity{{QID: Nolan, Place: mentions.Title}, {QID: Inception, Place: mentions.Lead}}},
		{ID: ids[1], Title: "B", Mentions: []mentions.Entity{{QID: Inception, Place: mentions.Title}, {QID: Unknown, Place: mentions.Title}}},
		{ID: ids[2], Title: "C", Mentions: []mentions.Entity{{QID: Inception, Place: mentions.Body}, {QID: Canada, Place: mentions.Body}}},
		{ID: ids[3], Title: "D"}, // mentions nothing, still a document
	}
	if err := ix.Replace(ctx, docs); err != nil {
		t.Fatalf("replace: %v", err)
	}

	runReads(t, ix, before)
	runWrites(t, ix, before)
}

// runReads checks Mentioning, its limit and Of over the suite's documents;
// before is the index's answer before they were written.
func runReads(t *testing.T, ix mentions.Index, before mentions.Found) {
	ctx := context.Background()
	t.Run("Mentioning", func(t *testing.T) {
		f, err := ix.Mentioning(ctx, []string{Inception, Nolan, Canada, Ireland, Unknown}, 100)
		if err != nil {
			t.Fatal(err)
		}
		if f.N != before.N+4 {
			t.Errorf("N = %d, want %d (4 more documents, one that mentions nothing)", f.N, before.N+4)
		}
		want := map[string][]mentions.Mention{
			Inception: {{Doc: ids[1], Place: mentions.Title}, {Doc: ids[0], Place: mentions.Lead}, {Doc: ids[2], Place: mentions.Body}},
			Nolan:     {{Doc: ids[0], Place: mentions.Title}},
			Canada:    {{Doc: ids[2], Place: mentions.Body}},
		}
		for q, w := range want {
			if diff := cmp.Diff(w, ours(f.Docs[q])); diff != "" {
				t.Errorf("documents mentioning %s (-want +got):\n%s", q, diff)
			}
			if got := f.DF[q] - before.DF[q]; got != len(w) {
				t.Errorf("DF[%s] grew by %d, want %d", q, got, len(w))
			}
		}
		if _, ok := f.Docs[Unknown]; ok {
			t.Errorf("an unknown entity has documents: %v", f.Docs[Unknown])
		}
	})

	t.Run("Limit", func(t *testing.T) {
		f, err := ix.Mentioning(ctx, []string{Inception}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Docs[Inception]; len(got) != 1 || got[0].Place != mentions.Title {
			t.Errorf("limit 1: %v, want one document, a title mention", got)
		}
		if f.DF[Inception] < 3 {
			t.Errorf("DF beyond the limit: %d, want at least 3", f.DF[Inception])
		}
	})

	t.Run("Of", func(t *testing.T) {
		got, err := ix.Of(ctx, []string{ids[0], ids[1], ids[3], "mentionstest-ghost"})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string][]mentions.Entity{
			ids[0]: {{QID: Inception, Place: mentions.Lead}, {QID: Nolan, Place: mentions.Title}},
			ids[1]: {{QID: Inception, Place: mentions.Title}},
		}
		if diff := cmp.Diff(want[ids[0]], got[ids[0]]); diff != "" {
			t.Errorf("Of(%s) (-want +got):\n%s", ids[0], diff)
		}
		if diff := cmp.Diff(want[ids[1]], got[ids[1]]); diff != "" {
			t.Errorf("Of(%s), the unknown entity dropped (-want +got):\n%s", ids[1], diff)
		}
		if len(got[ids[3]]) != 0 {
			t.Errorf("Of(%s) = %v, want nothing", ids[3], got[ids[3]])
		}
		if _, ok := got["mentionstest-ghost"]; ok {
			t.Error("an unknown document has mentions")
		}
	})
}

// runWrites checks that Replace and Delete keep the index exact, and a
// cancelled context.
func runWrites(t *testing.T, ix mentions.Index, before mentions.Found) {
	ctx := context.Background()
	t.Run("ReplaceIsExact", func(t *testing.T) {
		// a now mentions Canada only, in its title: its Inception and Nolan
		// mentions go.
		if err := ix.Replace(ctx, []mentions.Document{{ID: ids[0], Title: "A2", Mentions: []mentions.Entity{{QID: Canada, Place: mentions.Title}}}}); err != nil {
			t.Fatal(err)
		}
		f, err := ix.Mentioning(ctx, []string{Inception, Nolan, Canada}, 100)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]mentions.Mention{{Doc: ids[1], Place: mentions.Title}, {Doc: ids[2], Place: mentions.Body}}, ours(f.Docs[Inception])); diff != "" {
			t.Errorf("Inception after the replace (-want +got):\n%s", diff)
		}
		if got := ours(f.Docs[Nolan]); len(got) != 0 {
			t.Errorf("Nolan is still mentioned by %v", got)
		}
		if diff := cmp.Diff([]mentions.Mention{{Doc: ids[0], Place: mentions.Title}, {Doc: ids[2], Place: mentions.Body}}, ours(f.Docs[Canada])); diff != "" {
			t.Errorf("Canada after the replace (-want +got):\n%s", diff)
		}
		if f.N != before.N+4 {
			t.Errorf("N = %d after a replace, want %d", f.N, before.N+4)
		}
	})

	t.Run("Delete", func(t *testing.T) {
		if err := ix.Delete(ctx, []string{ids[2], ids[3], "mentionstest-ghost"}); err != nil {
			t.Fatal(err)
		}
		f, err := ix.Mentioning(ctx, []string{Inception, Canada}, 100)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]mentions.Mention{{Doc: ids[1], Place: mentions.Title}}, ours(f.Docs[Inception])); diff != "" {
			t.Errorf("Inception after the delete (-want +got):\n%s", diff)
		}
		if f.N != before.N+2 {
			t.Errorf("N = %d after deleting two, want %d", f.N, before.N+2)
		}
		got, err := ix.Of(ctx, []string{ids[2]})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 0 {
			t.Errorf("a deleted document has mentions: %v", got)
		}
	})

	t.Run("Cancelled", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := ix.Mentioning(cctx, []string{Inception}, 1); err == nil {
			t.Error("Mentioning with a cancelled context: no error")
		}
	})
}

// ours keeps the suite's own documents of a list (a backend may hold
// others that mention the same entities).
func ours(ms []mentions.Mention) []mentions.Mention {
	var out []mentions.Mention
	for _, m := range ms {
		if len(m.Doc) > len("mentionstest-") && m.Doc[:len("mentionstest-")] == "mentionstest-" {
			out = append(out, m)
		}
	}
	return out
}
