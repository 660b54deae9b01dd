package bench

import (
	"container/heap"
	"context"
	"fmt"

	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/vec"
)

// remoteRecall is a remote index's vector search recall@k against the exact
// cosine scan of the corpus the benchmark sent it: the fraction of each
// query's k nearest documents (by the scan) among the k the index returns,
// averaged over queries. It is how a change to the server's HNSW settings
// is held to account for what it does to search, not only to ingest.
func remoteRecall(ctx context.Context, x retrieval.Index, docs []retrieval.Document, qvecs [][]float32, k int) (float64, error) {
	if len(qvecs) == 0 || len(docs) == 0 {
		return 0, fmt.Errorf("recall@%d needs queries and documents", k)
	}
	exact := exactTop(docs, qvecs, k)
	var sum float64
	for i, q := range qvecs {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		res, err := x.Search(ctx, retrieval.Query{Mode: retrieval.Vector, Vector: q, Limit: k})
		if err != nil {
			return 0, fmt.Errorf("vector search %d: %w", i, err)
		}
		got := make(map[string]bool, len(res))
		for _, r := range res {
			got[r.Doc.ID] = true
		}
		hit := 0
		for _, id := range exact[i] {
			if got[id] {
				hit++
			}
		}
		sum += float64(hit) / float64(len(exact[i]))
	}
	return sum / float64(len(qvecs)), nil
}

// exactTop is each query's k documents of highest cosine, by a scan that
// reads each document once against every query (the queries stay in cache).
func exactTop(docs []retrieval.Document, qvecs [][]float32, k int) [][]string {
	qs := make([][]float32, len(qvecs))
	for i, q := range qvecs {
		qs[i] = unit(q)
	}
	tops := make([]minHeap, len(qs))
	for j := range docs {
		d := docs[j].Vector
		n := vec.Norm(d)
		if n == 0 {
			continue
		}
		for i, q := range qs {
			s := float64(vec.Dot(q, d)) / n
			h := &tops[i]
			if h.Len() < k {
				heap.Push(h, scored{j, s})
			} else if s > (*h)[0].s {
				(*h)[0] = scored{j, s}
				heap.Fix(h, 0)
			}
		}
	}
	out := make([][]string, len(qs))
	for i, h := range tops {
		for _, e := range h {
			out[i] = append(out[i], docs[e.i].ID)
		}
	}
	return out
}

func unit(v []float32) []float32 {
	n := vec.Norm(v)
	u := make([]float32, len(v))
	if n == 0 {
		return u
	}
	for i, x := range v {
		u[i] = float32(float64(x) / n)
	}
	return u
}

type scored struct {
	i int
	s float64
}

// minHeap keeps the k best seen: its root is the worst of them.
type minHeap []scored

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(a, b int) bool { return h[a].s < h[b].s }
func (h minHeap) Swap(a, b int)      { h[a], h[b] = h[b], h[a] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(scored)) }
func (h *minHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
