package bench

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/corpus/corpustest"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/memkg"
)

func filmGraph(t *testing.T) (*memkg.Graph, []string) {
	t.Helper()
	g, _, err := corpustest.Graph(context.Background(), "codexm-film")
	if err != nil {
		t.Fatal(err)
	}
	var pool []string
	for _, e := range g.AllEntities() {
		pool = append(pool, e.QID)
	}
	return g, pool
}

// dropEdges answers as its graph, less every subgraph's last edge.
type dropEdges struct{ kg.Graph }

func (d dropEdges) Subgraphs(ctx context.Context, roots []string, p kg.SubgraphParams) (map[string]kg.Subgraph, error) {
	out, err := d.Graph.Subgraphs(ctx, roots, p)
	for q, sg := range out {
		if len(sg.Edges) > 0 {
			sg.Edges = sg.Edges[:len(sg.Edges)-1]
			out[q] = sg
		}
	}
	return out, err
}

func TestSubgraphsBench(t *testing.T) {
	g, pool := filmGraph(t)
	b := Subgraphs{Embedded: g, Given: g, GivenName: "same", Pool: pool, Seeds: 50, Rounds: 3, Seed: 7, Params: kg.DefaultSubgraphParams()}
	var out bytes.Buffer
	if err := b.Run(context.Background(), &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "identical subgraphs: 200 of 200 roots") {
		t.Errorf("report does not say all 4 x 50 subgraphs were compared and equal:\n%s", out.String())
	}
	if !regexp.MustCompile(`\np50_ratio=\d+\.\d{2}\n$`).MatchString(out.String()) {
		t.Errorf("report does not end with p50_ratio=R:\n%s", out.String())
	}
	// The same draw for a seed, another for another seed, no repeats.
	r1, r2, r3 := b.roots(1), b.roots(1), Subgraphs{Pool: pool, Seeds: 50, Seed: 8}.roots(1)
	if strings.Join(r1, ",") != strings.Join(r2, ",") || strings.Join(r1, ",") == strings.Join(r3, ",") {
		t.Error("draws are not seeded")
	}
	seen := map[string]bool{}
	for _, q := range r1 {
		if seen[q] {
			t.Fatalf("root %s drawn twice", q)
		}
		seen[q] = true
	}

	b.Given = dropEdges{g}
	out.Reset()
	if err := b.Run(context.Background(), &out, &bytes.Buffer{}); err == nil || !strings.Contains(out.String(), "DIFFERENT subgraphs") {
		t.Errorf("a backend with other answers passed: err %v\n%s", err, out.String())
	}
}

// plainGraph hides its graph's own Neighbourhoods: kg.Neighbourhoods then
// composes them from Subgraphs.
type plainGraph struct{ kg.Graph }

// With Channel the bench times kg.Neighbourhoods: memkg's one-pass
// neighbourhoods agree with those composed from Subgraphs, and hold fewer
// edges than the subgraphs of the same roots.
func TestSubgraphsBenchChannel(t *testing.T) {
	g, pool := filmGraph(t)
	p := kg.SubgraphParams{Hops: 2, MaxNodes: 4000, HubDegree: 40}
	edges := func(out string) int {
		m := regexp.MustCompile(`(?m)^embedded \(memkg\)\s+\S+\s+\S+\s+\d+\s+(\d+)$`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no embedded row in:\n%s", out)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	var sub, ch bytes.Buffer
	b := Subgraphs{Embedded: g, Given: plainGraph{g}, GivenName: "composed", Pool: pool, Seeds: 50, Rounds: 3, Seed: 7, Params: p}
	if err := b.Run(context.Background(), &sub, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	b.Channel = true
	if err := b.Run(context.Background(), &ch, &bytes.Buffer{}); err != nil {
		t.Fatalf("%v\n%s", err, ch.String())
	}
	if !strings.HasPrefix(ch.String(), "Neighbourhoods") || !strings.Contains(ch.String(), "identical subgraphs: 200 of 200 roots") {
		t.Errorf("channel report does not compare 200 equal neighbourhoods:\n%s", ch.String())
	}
	if e, s := edges(ch.String()), edges(sub.String()); e >= s || e == 0 {
		t.Errorf("neighbourhoods hold %d edges per call, subgraphs %d: want fewer, not none", e, s)
	}
}

func TestSubgraphsBenchRefusesBadSettings(t *testing.T) {
	g, pool := filmGraph(t)
	for _, c := range []struct {
		b    Subgraphs
		want string
	}{
		{Subgraphs{Embedded: g, Given: g, Pool: pool, Seeds: 0, Rounds: 1}, "--seeds 0"},
		{Subgraphs{Embedded: g, Given: g, Pool: pool, Seeds: 1, Rounds: 0}, "--rounds 0"},
		{Subgraphs{Embedded: g, Given: g, Pool: pool, Seeds: len(pool) + 1, Rounds: 1}, "only"},
	} {
		if err := c.b.Run(context.Background(), &bytes.Buffer{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one naming %q", err, c.want)
		}
	}
}

// dropMention answers as its graph, less each text's last mention.
type dropMention struct{ kg.Graph }

func (d dropMention) Link(ctx context.Context, text string) ([]kg.Mention, error) {
	ms, err := d.Graph.Link(ctx, text)
	if len(ms) > 0 {
		ms = ms[:len(ms)-1]
	}
	return ms, err
}

// TestLinkingBench: the same graph on both sides links every text alike and
// reports its mentions; a backend that drops mentions is called out.
func TestLinkingBench(t *testing.T) {
	g, _ := filmGraph(t)
	texts := []string{"Who directed Inception?", "Christopher Nolan and Christian Bale", "nothing to link here zzz"}
	b := Linking{Embedded: g, Given: g, GivenName: "same", Texts: texts, Rounds: 2}
	var out bytes.Buffer
	if err := b.Run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	var want int
	for _, q := range texts {
		ms, _ := g.Link(context.Background(), q)
		want += len(ms)
	}
	if want == 0 {
		t.Fatal("the film graph links none of the texts")
	}
	if !strings.Contains(out.String(), "identical links: 3 of 3 texts") || !regexp.MustCompile(`same +[0-9.]+ +[0-9.]+ +`+strconv.Itoa(want)+`\n`).MatchString(out.String()) ||
		!regexp.MustCompile(`\nlink_p50_ratio=\d+\.\d{2}\n`).MatchString(out.String()) {
		t.Errorf("report:\n%s", out.String())
	}
	out.Reset()
	b.Given = dropMention{g}
	if err := b.Run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "DIFFERENT links: 2 of 3 texts") {
		t.Errorf("dropped mentions not reported:\n%s", out.String())
	}
}

func TestQIDsBelow(t *testing.T) {
	in := []string{"Q5", "Q999999999", "Q1000000000", "Q1000000123", "Q42"}
	if got := QIDsBelow(in, 1000000000); strings.Join(got, " ") != "Q5 Q999999999 Q42" {
		t.Errorf("QIDsBelow = %v", got)
	}
	if got := QIDsBelow(in, 0); len(got) != len(in) {
		t.Errorf("QIDsBelow(0) dropped QIDs: %v", got)
	}
}
