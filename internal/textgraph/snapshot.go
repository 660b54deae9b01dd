package textgraph

import (
	"fmt"
	"sort"

	"github.com/dmar-kg/dmar/internal/gobfile"
)

// snapshot is what Save writes: the graph without maps, so that two saves of
// one graph are the same bytes.
type snapshot struct {
	Version  string
	Keys     []string
	Labels   []string
	Edges    []snapEdge // each once, A < B
	Vectors  []snapVec
	Parts    []Part
	Passages []int32
}

type snapEdge struct {
	A, B int32
	Kind EdgeKind
	W    float32
}

type snapVec struct {
	Node int32
	V    []float32
}

// Save writes the graph to path through a temporary file.
func (m *Memory) Save(path string) error {
	m.mu.RLock()
	s := snapshot{Version: Version, Keys: m.keys, Labels: m.label, Passages: m.passages}
	for i, hs := range m.adj {
		for _, h := range hs {
			if int32(i) < h.to {
				s.Edges = append(s.Edges, snapEdge{A: int32(i), B: h.to, Kind: h.kind, W: h.w})
			}
		}
	}
	for r, v := range m.vecs {
		s.Vectors = append(s.Vectors, snapVec{Node: m.rows[r], V: v})
	}
	ids := make([]string, 0, len(m.parts))
	for id := range m.parts {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		s.Parts = append(s.Parts, m.parts[id])
	}
	m.mu.RUnlock()
	if err := gobfile.Write(path, s); err != nil {
		return fmt.Errorf("save text graph: %w", err)
	}
	return nil
}

// Load reads a graph Save wrote; a snapshot of another Version is an error.
func Load(path string) (*Memory, error) {
	var s snapshot
	if err := gobfile.Read(path, &s); err != nil {
		return nil, fmt.Errorf("text graph snapshot: %w", err)
	}
	if s.Version != Version {
		return nil, fmt.Errorf("text graph snapshot %s is of version %q, not %q", path, s.Version, Version)
	}
	n := len(s.Keys)
	if len(s.Labels) != n || len(s.Passages) != n {
		return nil, fmt.Errorf("text graph snapshot %s is damaged", path)
	}
	m := NewMemory()
	m.keys, m.label, m.passages = s.Keys, s.Labels, s.Passages
	m.adj = make([][]half, n)
	m.vecOf = make([]int32, n)
	for i := range m.vecOf {
		m.vecOf[i] = -1
	}
	for i, k := range m.keys {
		m.idx[k] = int32(i)
	}
	for _, e := range s.Edges {
		if e.A < 0 || e.B < 0 || int(e.A) >= n || int(e.B) >= n {
			return nil, fmt.Errorf("text graph snapshot %s: an edge names node %d or %d of %d", path, e.A, e.B, n)
		}
		m.adj[e.A] = append(m.adj[e.A], half{to: e.B, kind: e.Kind, w: e.W})
		m.adj[e.B] = append(m.adj[e.B], half{to: e.A, kind: e.Kind, w: e.W})
	}
	for _, v := range s.Vectors {
		if v.Node < 0 || int(v.Node) >= n {
			return nil, fmt.Errorf("text graph snapshot %s: a vector names node %d of %d", path, v.Node, n)
		}
		m.setVector(v.Node, v.V, NodeWords(m.keys[v.Node], m.label[v.Node]))
	}
	for _, pp := range s.Parts {
		m.parts[pp.ID] = pp
	}
	return m, nil
}
