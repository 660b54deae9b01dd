package pipeline

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/reformulate"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/scoring"
)

// anchorPhi keeps each anchor's Shapley explanation between phases.
type anchorPhi struct {
	phi   []float64
	exact bool
}

// reformInput gathers the reformulator's input: snippets of the anchors, and
// the bridge entities and relations ranked by Shapley contribution.
func (r *request) reformInput(ctx context.Context, anchors []Doc, cands []retrieval.Hit, games []*scoring.Game, subs map[string]*entry) reformulate.Input {
	in := reformulate.Input{Query: r.res.Query}
	gameOf := map[string]*scoring.Game{}
	for i, h := range cands {
		gameOf[h.Doc.ID] = games[i]
	}
	r.phis = map[string]anchorPhi{}
	isQuery := map[string]bool{}
	for _, q := range r.qsubs {
		isQuery[q.sg.Root] = true
	}
	bridge, rel := map[string]float64{}, map[string]float64{}
	bridgeLabel := map[string]string{}
	for _, a := range anchors {
		phi, exact := r.phi(gameOf[a.ID], a.ID)
		r.phis[a.ID] = anchorPhi{phi, exact}
		if len(phi) == 0 {
			continue
		}
		for _, e := range a.Entities {
			if isQuery[e] {
				continue
			}
			for j, q := range r.qsubs {
				hop := -1
				for _, n := range q.sg.Nodes {
					if n.QID == e {
						hop, bridgeLabel[e] = n.Hop, n.Label
						break
					}
				}
				if hop < 0 {
					continue
				}
				bridge[e] += phi[j]
				hopOf := map[string]int{}
				for _, n := range q.sg.Nodes {
					hopOf[n.QID] = n.Hop
				}
				for _, ed := range q.sg.Edges {
					other := ""
					switch e {
					case ed.From:
						other = ed.To
					case ed.To:
						other = ed.From
					}
					if other != "" && hopOf[other] < hop && ed.Label != "" {
						rel[ed.Label] += phi[j]
					}
				}
			}
		}
	}
	in.Bridges = rankTerms(bridge, bridgeLabel)
	in.Relations = rankTerms(rel, nil)
	names := r.names(ctx, bridge)
	for _, a := range anchors {
		in.Anchors = append(in.Anchors, reformulate.Evidence{Title: a.Title, Snippet: Snippet(a.Text, names, r.opts.SnippetChars)})
	}
	return in
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
// entities: sentences that mention them lead the anchors' snippets.
func (r *request) names(ctx context.Context, bridges map[string]float64) []string {
	ids := make([]string, 0, len(r.qsubs)+len(bridges))
	for _, q := range r.qsubs {
		ids = append(ids, q.sg.Root)
	}
	for b := range bridges {
		ids = append(ids, b)
	}
	sort.Strings(ids)
	ents, err := r.p.cfg.Graph.Entities(ctx, ids)
	if err != nil {
		ents = nil
	}
	var out []string
	for _, e := range ents {
		for _, s := range append([]string{e.Label}, e.Aliases...) {
			if f := kg.NormalizeForm(s); kg.Linkable(f) {
				out = append(out, f)
			}
		}
	}
	sort.Strings(out)
	return out
}

// Snippet takes the sentences of text that mention one of names first (in
// text order), then the others, up to max characters.
func Snippet(text string, names []string, max int) string {
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
			if b.Len()+1+len(s) > max {
				break
			}
			b.WriteByte(' ')
		}
		b.WriteString(s)
		if b.Len() >= max {
			break
		}
	}
	out := b.String()
	if len(out) > max {
		cut := max
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

// reformulate runs the requested reformulator; the chat one falls back to the
// built-in one on any error, and says so.
func (r *request) reformulate(ctx context.Context, in reformulate.Input) (string, string) {
	switch r.opts.Reformulator {
	case "none":
		return in.Query, "none"
	case "chat":
		if r.p.cfg.Chat == nil {
			r.fallback("reformulator_chat_unavailable", "no chat endpoint is configured; the built-in reformulator ran")
			break
		}
		q, err := r.p.cfg.Chat.Reformulate(ctx, in)
		if err == nil {
			return q, "chat"
		}
		if ctx.Err() != nil {
			break
		}
		r.fallback("reformulator_chat_failed", "chat reformulator failed ("+err.Error()+"); the built-in reformulator ran")
	}
	q, _ := r.p.builtin.Reformulate(ctx, in)
	return q, "builtin"
}

// explainAnchors fills the response's anchors, the Browser statement and,
// when asked, persists the retrieval.
func (r *request) explainAnchors(anchors []Doc, games []*scoring.Game, subs map[string]*entry, in reformulate.Input) {
	var roots []string
	for i, a := range anchors {
		ap := r.phis[a.ID]
		phis := []Phi{}
		for j, v := range ap.phi {
			q := r.qsubs[j].sg
			phis = append(phis, Phi{QID: q.Root, Label: q.Nodes[0].Label, Phi: v})
		}
		sgs := []kg.Subgraph{}
		if r.structOn {
			sgs = r.rankDocSubgraphs(a, subs)
		}
		for _, s := range sgs {
			roots = append(roots, s.Root)
		}
		snippet := ""
		if i < len(in.Anchors) {
			snippet = in.Anchors[i].Snippet
		}
		r.res.Anchors = append(r.res.Anchors, Anchor{Doc: a, Snippet: snippet, Phi: phis, PhiExact: ap.exact, Subgraphs: sgs})
	}
	if insp, ok := r.p.cfg.Graph.(kg.Inspector); ok && len(roots) > 0 {
		stmt, params := insp.SubgraphStatement(roots, r.opts.SubgraphParams())
		r.res.Neo4j = &Statement{Cypher: stmt, Params: params}
	}
}

// persist records the retrieval in the graph when the request asks for it.
func (r *request) persist(ctx context.Context) {
	if !r.opts.Persist {
		return
	}
	rec, ok := r.p.cfg.Graph.(kg.Recorder)
	if !ok {
		r.fallback("persist_unsupported", "the configured graph backend cannot record retrievals (use Neo4j)")
		return
	}
	rr := kg.RetrievalRecord{ID: retrievalID(r.res), Query: r.res.Query, Reformulated: r.res.ReformulatedQuery, At: time.Now().UTC()}
	for _, a := range r.res.Anchors {
		rr.Anchors = append(rr.Anchors, kg.AnchorRecord{DocID: a.ID, Title: a.Title, Rank: a.Rank, Score: a.Score, Entities: a.Entities})
	}
	if err := rec.RecordRetrieval(ctx, rr); err != nil {
		r.fallback("persist_failed", "recording the retrieval failed: "+err.Error())
		return
	}
	r.res.RetrievalID = rr.ID
}

func retrievalID(res *Result) string {
	return fmt.Sprintf("r-%d", time.Now().UnixNano())
}
