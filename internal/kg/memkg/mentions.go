package memkg

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/dmar-kg/dmar/internal/mentions"
)

var _ mentions.Index = (*Mentions)(nil)

// Mentions is the embedded mention index (mentions.Index): built at load
// from the corpus's stored links (mentions.LocateAll) and kept exact by the
// document store's writes. Safe for concurrent use; a write is applied
// atomically for its readers.
type Mentions struct {
	g  *Graph // the entities mentions may name
	mu sync.RWMutex
	// docs are each document's mentions, sorted by QID; ents each entity's
	// documents in mentions.Less order.
	docs map[string][]mentions.Entity
	ents map[string][]mentions.Mention
}

// NewMentions is an empty index of mentions of g's entities.
func NewMentions(g *Graph) *Mentions {
	return &Mentions{g: g, docs: map[string][]mentions.Entity{}, ents: map[string][]mentions.Mention{}}
}

// Replace implements mentions.Writer.
func (m *Mentions) Replace(ctx context.Context, docs []mentions.Document) error {
	return m.write(ctx, func(touched map[string]bool) {
		for _, d := range docs {
			m.remove(d.ID, touched)
			kept := make([]mentions.Entity, 0, len(d.Mentions))
			for _, e := range d.Mentions {
				if _, known := m.g.idx[e.QID]; known {
					kept = append(kept, e)
				}
			}
			slices.SortFunc(kept, func(a, b mentions.Entity) int { return strings.Compare(a.QID, b.QID) })
			kept = slices.CompactFunc(kept, func(a, b mentions.Entity) bool { return a.QID == b.QID })
			m.docs[d.ID] = kept
			for _, e := range kept {
				m.ents[e.QID] = append(m.ents[e.QID], mentions.Mention{Doc: d.ID, Place: e.Place})
				touched[e.QID] = true
			}
		}
	})
}

// Delete implements mentions.Writer.
func (m *Mentions) Delete(ctx context.Context, ids []string) error {
	return m.write(ctx, func(touched map[string]bool) {
		for _, id := range ids {
			m.remove(id, touched)
			delete(m.docs, id)
		}
	})
}

// write makes change under the lock, unless ctx is done, and re-sorts the
// lists of the entities it touched.
func (m *Mentions) write(ctx context.Context, change func(touched map[string]bool)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	touched := map[string]bool{}
	change(touched)
	m.resort(touched)
	return nil
}

// remove takes document id out of its entities' lists (left unsorted
// until resort).
func (m *Mentions) remove(id string, touched map[string]bool) {
	for _, e := range m.docs[id] {
		list := m.ents[e.QID]
		for i, x := range list {
			if x.Doc == id {
				list = append(list[:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(m.ents, e.QID)
		} else {
			m.ents[e.QID] = list
		}
		touched[e.QID] = true
	}
}

func (m *Mentions) resort(touched map[string]bool) {
	for q := range touched {
		if list, ok := m.ents[q]; ok {
			slices.SortFunc(list, mentions.Less)
		}
	}
}

// Mentioning implements mentions.Reader.
func (m *Mentions) Mentioning(ctx context.Context, qids []string, limit int) (mentions.Found, error) {
	if err := ctx.Err(); err != nil {
		return mentions.Found{}, err
	}
	limit = max(limit, 1)
	m.mu.RLock()
	defer m.mu.RUnlock()
	f := mentions.Found{Docs: make(map[string][]mentions.Mention, len(qids)), DF: make(map[string]int, len(qids)), N: len(m.docs)}
	for _, q := range qids {
		list, ok := m.ents[q]
		if !ok {
			continue
		}
		f.DF[q] = len(list)
		f.Docs[q] = slices.Clone(list[:min(limit, len(list))])
	}
	return f, nil
}

// Of implements mentions.Reader.
func (m *Mentions) Of(ctx context.Context, ids []string) (map[string][]mentions.Entity, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make(map[string][]mentions.Entity, len(ids))
	for _, id := range ids {
		if es := m.docs[id]; len(es) > 0 {
			out[id] = slices.Clone(es)
		}
	}
	return out, nil
}

// Len is the number of documents indexed.
func (m *Mentions) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.docs)
}
