package pipeline

import (
	"context"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/reformulate"
	"github.com/dmar-kg/dmar/internal/scoring"
)

// anchorPhi is an anchor's Shapley explanation: one value per query subgraph.
type anchorPhi struct {
	phi   []float64
	exact bool
}

// reformulated is the first half of phase 3's output: what the reformulator
// was given, Q' and the reformulator that wrote it, and the anchors' Shapley
// explanations the input was ranked by.
type reformulated struct {
	in    reformulate.Input
	query string // Q'
	by    string
	phis  map[string]anchorPhi // by anchor ID
}

// reformulate is phase 3's first half: the anchors' Shapley values rank the
// bridge entities and relations that, with the anchors' snippets, guide the
// reformulation of Q into Q'.
func (pp paper) reformulate(ctx context.Context, sc scored, anchors []Doc) (reformulated, error) {
	t := time.Now()
	phis, err := pp.anchorPhis(ctx, sc, anchors)
	if err != nil {
		return reformulated{}, err
	}
	ref := reformulated{phis: phis}
	ref.in = pp.reformInput(sc.grounded, anchors, ref.phis)
	ref.query, ref.by = pp.runReformulator(ctx, ref.in)
	pp.trace.timed("reformulate", t)
	return ref, nil
}

// anchorPhis explains each anchor's game.
func (pp paper) anchorPhis(ctx context.Context, sc scored, anchors []Doc) (map[string]anchorPhi, error) {
	gameOf := map[string]*scoring.Game{}
	for i, h := range sc.hits {
		gameOf[h.Doc.ID] = sc.games[i]
	}
	phis := map[string]anchorPhi{}
	for _, a := range anchors {
		phi, exact, err := pp.score.phi(ctx, gameOf[a.ID], a.ID)
		if err != nil {
			return nil, err
		}
		phis[a.ID] = anchorPhi{phi, exact}
	}
	return phis, nil
}

// reformInput gathers the reformulator's input: snippets of the anchors, and
// the bridge entities and relations ranked by Shapley contribution.
func (pp paper) reformInput(g grounded, anchors []Doc, phis map[string]anchorPhi) reformulate.Input {
	in := reformulate.Input{Query: pp.query}
	bridge, rel, bridgeLabel := bridges(anchors, phis, g.st.qsubs)
	in.Bridges = rankTerms(bridge, bridgeLabel)
	in.Relations = rankTerms(rel, nil)
	names := names(g.ents, g.st.qsubs, bridge)
	for _, a := range anchors {
		in.Anchors = append(in.Anchors, reformulate.Evidence{Title: a.Title, Snippet: Snippet(a.Text, names, pp.SnippetChars)})
	}
	return in
}

// bridges scores the anchors' entities that are nodes of a query subgraph
// (not its root) by the phi of that subgraph, and the relations that reach
// them from nearer the root; labels are the bridges' node labels.
func bridges(anchors []Doc, phis map[string]anchorPhi, qsubs []*entry) (bridge, rel map[string]float64, labels map[string]string) {
	isQuery := map[string]bool{}
	for _, q := range qsubs {
		isQuery[q.sg.Root] = true
	}
	bridge, rel, labels = map[string]float64{}, map[string]float64{}, map[string]string{}
	for _, a := range anchors {
		phi := phis[a.ID].phi
		if len(phi) == 0 {
			continue
		}
		for _, e := range a.Entities {
			if isQuery[e] {
				continue
			}
			for j, q := range qsubs {
				hop := -1
				for _, n := range q.sg.Nodes {
					if n.QID == e {
						hop, labels[e] = n.Hop, n.Label
						break
					}
				}
				if hop < 0 {
					continue
				}
				bridge[e] += phi[j]
				addRelations(rel, q.sg, e, hop, phi[j])
			}
		}
	}
	return bridge, rel, labels
}

// addRelations adds phi to the label of every edge of sg between bridge e (at
// hop) and a node nearer the root.
func addRelations(rel map[string]float64, sg kg.Subgraph, e string, hop int, phi float64) {
	hopOf := map[string]int{}
	for _, n := range sg.Nodes {
		hopOf[n.QID] = n.Hop
	}
	for _, ed := range sg.Edges {
		other := ""
		switch e {
		case ed.From:
			other = ed.To
		case ed.To:
			other = ed.From
		}
		if other != "" && hopOf[other] < hop && ed.Label != "" {
			rel[ed.Label] += phi
		}
	}
}

// rankTerms orders keys by score (descending), then by key; labels maps keys
// to display text when given.
func rankTerms(score map[string]float64, labels map[string]string) []reformulate.Term {
	keys := make([]string, 0, len(score))
	for k := range score {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if score[keys[i]] != score[keys[j]] {
			return score[keys[i]] > score[keys[j]]
		}
		return keys[i] < keys[j]
	})
	out := make([]reformulate.Term, 0, len(keys))
	for _, k := range keys {
		text := k
		if labels != nil {
			text = labels[k]
		}
		out = append(out, reformulate.Term{Text: text, Score: score[k]})
	}
	return out
}

// names are the normalised labels and aliases of the query and bridge
// entities: sentences that mention them lead the anchors' snippets. ents
// holds every node of G_Q, the bridges included.
func names(ents map[string]kg.Entity, qsubs []*entry, bridges map[string]float64) []string {
	ids := map[string]bool{}
	for _, q := range qsubs {
		ids[q.sg.Root] = true
	}
	for b := range bridges {
		ids[b] = true
	}
	var out []string
	for id := range ids {
		e, ok := ents[id]
		if !ok {
			continue
		}
		for _, s := range append([]string{e.Label}, e.Aliases...) {
			if f := kg.NormalizeForm(s); kg.Linkable(f) {
				out = append(out, f)
			}
		}
	}
	sort.Strings(out) // map order above
	return out
}

// Snippet takes the sentences of text that mention one of names first (in
// text order), then the others, up to limit characters.
func Snippet(text string, names []string, limit int) string {
	sents := sentences(text)
	var first, rest []string
	for _, s := range sents {
		f := " " + kg.NormalizeForm(s) + " "
		hit := false
		for _, n := range names {
			if strings.Contains(f, " "+n+" ") {
				hit = true
				break
			}
		}
		if hit {
			first = append(first, s)
		} else {
			rest = append(rest, s)
		}
	}
	var b strings.Builder
	for _, s := range append(first, rest...) {
		if b.Len() > 0 {
			if b.Len()+1+len(s) > limit {
				break
			}
			b.WriteByte(' ')
		}
		b.WriteString(s)
		if b.Len() >= limit {
			break
		}
	}
	out := b.String()
	if len(out) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(out[cut]) {
			cut--
		}
		out = strings.TrimSpace(out[:cut]) + "…"
	}
	return out
}

func sentences(text string) []string {
	var out []string
	start := 0
	for i := 0; i < len(text); i++ {
		c := text[i]
		end := c == '\n' || ((c == '.' || c == '!' || c == '?') && (i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\n'))
		if end {
			if s := strings.TrimSpace(text[start : i+1]); s != "" {
				out = append(out, s)
			}
			start = i + 1
		}
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// runReformulator runs the requested reformulator; the chat one falls back to
// the built-in one on any error, and says so.
func (pp paper) runReformulator(ctx context.Context, in reformulate.Input) (string, string) {
	switch pp.Reformulator {
	case "none":
		return in.Query, "none"
	case "chat":
		if pp.chat == nil {
			pp.trace.fallback("reformulator_chat_unavailable", "no chat endpoint is configured; the built-in reformulator ran")
			break
		}
		q, err := pp.chat.Reformulate(ctx, in)
		if err == nil {
			return q, "chat"
		}
		if ctx.Err() != nil {
			break
		}
		pp.trace.fallback("reformulator_chat_failed", "chat reformulator failed ("+err.Error()+"); the built-in reformulator ran")
	}
	q, _ := reformulate.Builtin{MaxBridges: ReformBridges, MaxRelations: ReformRelations}.Reformulate(ctx, in)
	return q, "builtin"
}

// The built-in reformulator's caps on the bridge entities and relations it
// adds to Q, chosen on kgqa train (docs/method.md), so that Q' stays close
// to Q and the second search is not diluted.
const (
	ReformBridges   = 8
	ReformRelations = 4
)
