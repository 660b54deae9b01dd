// Package reformulate turns the original query and its anchors into the
// second-stage query Q' (DMAR phase 3). Built-in: KG-grounded and
// deterministic, no generative model. Chat: any OpenAI-compatible
// chat-completions endpoint with the paper's prompt. None: Q' = Q.
package reformulate

import (
	"context"
	"fmt"
	"strings"

	"github.com/dmar-kg/dmar/internal/kg"
)

// Input is what a reformulator sees.
type Input struct {
	Query   string
	Anchors []Evidence
	// Bridges are entities linked in the anchors that lie within h hops of a
	// query entity, best first (by Shapley contribution).
	Bridges []Term
	// Relations label the KG edges between query entities and bridges, best first.
	Relations []Term
	// Names are names the anchors' texts give, added after the relations.
	Names []string
}

// Evidence is one anchor as the prompt shows it.
type Evidence struct {
	Title   string
	Snippet string
}

// Term is a label with its ranking score.
type Term struct {
	Text  string
	Score float64
}

// Prompt renders the paper's reformulation input format.
func Prompt(in Input) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[Original Query: %s]\n", in.Query)
	for i, a := range in.Anchors {
		fmt.Fprintf(&b, "[Evidence %d: %s]\n", i+1, a.Snippet)
	}
	b.WriteString("Reformulate:")
	return b.String()
}

// None is the ablation: the second stage searches with Q.
type None struct{}

// Reformulate returns the query unchanged.
func (None) Reformulate(ctx context.Context, in Input) (string, error) { return in.Query, ctx.Err() }

// Builtin appends to Q the anchor titles, the bridge entities' labels and the
// relation labels, skipping what Q already says. Deterministic.
type Builtin struct {
	MaxBridges   int // default 8
	MaxRelations int // default 4
}

// Reformulate implements the built-in, KG-grounded reformulator.
func (b Builtin) Reformulate(ctx context.Context, in Input) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	maxB, maxR := b.MaxBridges, b.MaxRelations
	if maxB <= 0 {
		maxB = 8
	}
	if maxR <= 0 {
		maxR = 4
	}
	have := " " + kg.NormalizeForm(in.Query) + " "
	parts := []string{strings.TrimSpace(in.Query)}
	add := func(s string) {
		f := kg.NormalizeForm(s)
		if f == "" || strings.Contains(have, " "+f+" ") {
			return
		}
		have += f + " "
		parts = append(parts, strings.TrimSpace(s))
	}
	for _, a := range in.Anchors {
		add(a.Title)
	}
	for i, t := range in.Bridges {
		if i == maxB {
			break
		}
		add(t.Text)
	}
	for i, t := range in.Relations {
		if i == maxR {
			break
		}
		add(t.Text)
	}
	for _, n := range in.Names {
		add(n)
	}
	return strings.Join(parts, " "), nil
}
