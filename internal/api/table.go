package api

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// WriteTable writes a retrieval answer as the text table of dmar query:
// the query, its entities and reformulation, the anchors with their
// Shapley values, the results with their score breakdown and the KG paths
// they name, any fallbacks and the stage timings.
func WriteTable(w io.Writer, r *RetrieveResponse) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "Query:        %s\n", r.Query)
	var ents []string
	for _, e := range r.QueryEntities {
		ents = append(ents, fmt.Sprintf("%s (%s, %q)", e.Label, e.QID, e.Surface))
	}
	if len(ents) == 0 {
		ents = []string{"none"}
	}
	fmt.Fprintf(ew, "Entities:     %s\n", strings.Join(ents, "; "))
	fmt.Fprintf(ew, "Reformulated: %s  [%s]\n\n", r.ReformulatedQuery, r.Reformulator)
	fmt.Fprintln(ew, "Anchors")
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  #\tfused\tsem\tent\tphi\tid\ttitle")
	for _, a := range r.Anchors {
		var phis []string
		for _, p := range a.Phi {
			phis = append(phis, fmt.Sprintf("%s=%.3f", p.QID, p.Phi))
		}
		fmt.Fprintf(tw, "  %d\t%.3f\t%.3f\t%.3f\t%s\t%s\t%s\n", a.Rank, a.Score, a.Breakdown.Semantic, a.Breakdown.Structural, strings.Join(phis, " "), a.ID, clip(a.Title, 50))
	}
	tw.Flush()
	fmt.Fprintln(ew, "\nResults")
	tw = tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	ranked := false
	for _, d := range r.Results {
		ranked = ranked || d.Breakdown.Rank != nil
	}
	if ranked {
		fmt.Fprintln(tw, "  #\tranker\tsem\tent\tfound in\tid\ttitle")
	} else {
		fmt.Fprintln(tw, "  #\tfinal\tsem\tent\tz_sem\tz_ent\tgate s/e\tid\ttitle")
	}
	for _, d := range r.Results {
		b := d.Breakdown
		if ranked {
			fmt.Fprintf(tw, "  %d\t%.3f\t%.3f\t%.3f\t%s\t%s\t%s\n", d.Rank, d.Score, b.Semantic, b.Structural, foundIn(b.Rank), d.ID, clip(d.Title, 50))
			continue
		}
		fmt.Fprintf(tw, "  %d\t%.3f\t%.3f\t%.3f\t%.2f\t%.2f\t%.2f/%.2f\t%s\t%s\n", d.Rank, d.Score, b.Semantic, b.Structural, b.ZSemantic, b.ZStructural, b.Gate.Semantic, b.Gate.Structural, d.ID, clip(d.Title, 50))
	}
	tw.Flush()
	writePaths(ew, r.Results)
	if len(r.Fallbacks) > 0 {
		fmt.Fprintln(ew, "\nFallbacks")
		for _, f := range r.Fallbacks {
			fmt.Fprintf(ew, "  %s: %s\n", f.Name, f.Reason)
		}
	}
	stages := make([]string, 0, len(r.TimingsMS))
	for s := range r.TimingsMS {
		stages = append(stages, s)
	}
	sort.Strings(stages)
	var ts []string
	for _, s := range stages {
		ts = append(ts, fmt.Sprintf("%s %.1f", s, r.TimingsMS[s]))
	}
	fmt.Fprintf(ew, "\nTimings (ms): %s\n", strings.Join(ts, ", "))
	return ew.err
}

// writePaths lists each result's named paths (breakdown.paths), best first
// with their question relevance; a server that names none (an older one)
// gets no section.
func writePaths(w io.Writer, results []Doc) {
	named := false
	for _, d := range results {
		named = named || d.Breakdown.Paths != nil
	}
	if !named {
		return
	}
	fmt.Fprintln(w, "\nPaths (from a query entity to the result's entities, best first)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  #	id	relevance	path")
	for _, d := range results {
		if len(d.Breakdown.Paths) == 0 {
			fmt.Fprintf(tw, "  %d	%s	-	none\n", d.Rank, d.ID)
		}
		for i, p := range d.Breakdown.Paths {
			rank, id := fmt.Sprint(d.Rank), d.ID
			if i > 0 {
				rank, id = "", ""
			}
			fmt.Fprintf(tw, "  %s\t%s\t%.3f\t%s\n", rank, id, p.Relevance, p.Text)
		}
	}
	tw.Flush()
}

// foundIn says where the learned ranker's result was found: its ranks in
// the searches for Q and Q', in the graph channel and in the text graph
// channel, whether it is the page of an entity the query names, and which
// better-ranked document named it (title_links).
func foundIn(r *RankBreakdown) string {
	if r == nil {
		return "-"
	}
	var out []string
	for _, f := range []struct {
		name string
		rank int
	}{{"Q", r.Stage1Rank}, {"Q'", r.Stage2Rank}, {"kg", r.GraphRank}, {"text", r.TextRank}} {
		if f.rank > 0 {
			out = append(out, fmt.Sprintf("%s#%d", f.name, f.rank))
		}
	}
	if r.Own {
		out = append(out, "own page")
	}
	if r.NamedBy != "" {
		out = append(out, "named by "+r.NamedBy)
	}
	if len(out) == 0 {
		return "-"
	}
	return strings.Join(out, " ")
}

// errWriter keeps the first write error and drops later writes.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// clip shortens s to n runes, the last one an ellipsis.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
