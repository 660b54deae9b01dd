package neo4jkg

import (
	"context"

	"github.com/dmar-kg/dmar/cypher"
	"github.com/dmar-kg/dmar/internal/mentions"
)

var _ mentions.Index = Mentions{}

// Mentions is the mention index on Neo4j (mentions.Index): the
// (:Document)-[:MENTIONS {place}]->(:Entity) edges that dmar load corpus and
// the document store write. Edges written before places were stored read
// as text mentions (mentions.Body) until the corpus is loaded again.
type Mentions struct{ s *Store }

// Mentions is the store's mention index.
func (s *Store) Mentions() Mentions { return Mentions{s} }

// Replace implements mentions.Writer: each document's node and its
// MENTIONS edges, exactly its mentions, with their places; 1,000 documents
// a transaction.
func (m Mentions) Replace(ctx context.Context, docs []mentions.Document) error {
	return replaceDocs(ctx, m.s, "replace mentions", cypher.ReplaceMentions, docs, func(d mentions.Document) (string, map[string]any) {
		ms := make([]map[string]any, len(d.Mentions))
		for j, e := range d.Mentions {
			ms[j] = map[string]any{"qid": e.QID, "place": int64(e.Place)}
		}
		return d.ID, map[string]any{"id": d.ID, "title": d.Title, "mentions": ms}
	})
}

// Delete implements mentions.Writer: the documents' nodes and edges go.
func (m Mentions) Delete(ctx context.Context, ids []string) error {
	return m.s.DeleteDocuments(ctx, ids)
}

// Mentioning implements mentions.Reader in one round trip.
func (m Mentions) Mentioning(ctx context.Context, qids []string, limit int) (mentions.Found, error) {
	res, err := m.s.read(ctx, "documents mentioning entities", cypher.Mentioning, map[string]any{"qids": nonNil(qids), "limit": int64(max(limit, 1))})
	if err != nil {
		return mentions.Found{}, err
	}
	f := mentions.Found{Docs: map[string][]mentions.Mention{}, DF: map[string]int{}}
	for _, r := range res.Records {
		n, _ := r.Get("n")
		f.N = int(asInt(n))
		qv, _ := r.Get("qid")
		q, _ := qv.(string)
		dfv, _ := r.Get("df")
		df := int(asInt(dfv))
		if q == "" || df == 0 {
			continue
		}
		f.DF[q] = df
		dv, _ := r.Get("docs")
		for _, x := range asList(dv) {
			row, _ := x.(map[string]any)
			id, _ := row["id"].(string)
			f.Docs[q] = append(f.Docs[q], mentions.Mention{Doc: id, Place: mentions.Place(asInt(row["place"]))})
		}
	}
	return f, nil
}

// Of implements mentions.Reader in one round trip.
func (m Mentions) Of(ctx context.Context, ids []string) (map[string][]mentions.Entity, error) {
	res, err := m.s.read(ctx, "documents' mentions", cypher.DocumentMentions, map[string]any{"ids": nonNil(ids)})
	if err != nil {
		return nil, err
	}
	out := map[string][]mentions.Entity{}
	for _, r := range res.Records {
		iv, _ := r.Get("id")
		id, _ := iv.(string)
		mv, _ := r.Get("mentions")
		var es []mentions.Entity
		for _, x := range asList(mv) {
			row, _ := x.(map[string]any)
			q, _ := row["qid"].(string)
			es = append(es, mentions.Entity{QID: q, Place: mentions.Place(asInt(row["place"]))})
		}
		if len(es) > 0 {
			out[id] = es
		}
	}
	return out, nil
}

func asInt(v any) int64 {
	n, _ := v.(int64)
	return n
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}
