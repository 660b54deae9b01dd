package answer

import "strings"

// GraphAnswer is what the knowledge graph says the answer is: the entity at
// the end of the path that put the top document first, the document being
// that entity's own page.
type GraphAnswer struct {
	Doc   string // the top document's id, cited
	Label string // the path's end entity's label: the answer
	Path  string // the labelled path, for the reply's explanation
	// Relevance is the path's question relevance (how well its relations
	// match the question's), Confidence the linking confidence of the
	// entity it starts from (1 for an exact match), Agree the share of the
	// other top documents the graph channel reached too.
	Relevance, Confidence, Agree float64
	// Trusted is set by Trust.
	Trusted bool
}

// GraphTrust is the rule that decides when a graph answer stands without a
// reader: each measure at least its threshold. The defaults were chosen on
// kgqa train and the tune half of kgqa dev (docs/eval/end-to-end.md).
type GraphTrust struct {
	MinRelevance, MinConfidence, MinAgree float64
}

// DefaultGraphTrust is the default rule.
var DefaultGraphTrust = GraphTrust{MinRelevance: 0.4}

// Trust marks g trusted when it meets t; an answer with no label or no
// document is never trusted.
func (t GraphTrust) Trust(g *GraphAnswer) {
	if g == nil {
		return
	}
	g.Trusted = strings.TrimSpace(g.Label) != "" && g.Doc != "" &&
		g.Relevance >= t.MinRelevance && g.Confidence >= t.MinConfidence && g.Agree >= t.MinAgree
}
