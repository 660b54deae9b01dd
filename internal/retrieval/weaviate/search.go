package weaviate

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"
	"github.com/weaviate/weaviate/entities/models"
)

// maxResults is Weaviate's QUERY_MAXIMUM_RESULTS default: no query may ask
// for more objects.
const maxResults = 10000

// tieSlack is how many hits beyond the limit Search asks for, so that a run
// of equal scores across the cut can be ordered by document id (the port's
// contract) instead of Weaviate's internal order.
const tieSlack = 8

// Search runs a BM25, vector or hybrid search. Hits are ordered by
// descending score, ties by document id. Scores are Weaviate's: BM25 sums,
// fused hybrid scores, and for vector search 1 - cosine distance (the cosine
// similarity, which is also what hybrid fusion uses for the vector half).
func (s *Store) Search(ctx context.Context, q retrieval.Query) ([]retrieval.Hit, error) {
	if err := q.Validate(); err != nil {
		return nil, errs.E(errs.Invalid, "%v", err)
	}
	if err := finite(q.Vector); err != nil {
		return nil, errs.Field("vector", "%v", err)
	}
	f, none := cleanFilter(q.Filter)
	if none {
		return []retrieval.Hit{}, nil // every filter value was unprintable, so nothing can match
	}
	q.Filter = f
	q.Text = printable(q.Text)

	limitCap := maxResults
	if q.Mode == retrieval.Hybrid {
		// A hybrid request for up to HybridCandidates hits fuses the same
		// candidate lists whatever its limit; past that, widening it would
		// change the lists and so the scores.
		limitCap = min(maxResults, max(s.cfg.HybridCandidates, q.Limit))
	}
	if q.Limit > maxResults {
		return nil, errs.Field("limit", "%d is more than Weaviate returns (%d)", q.Limit, maxResults)
	}
	fetch := min(q.Limit+tieSlack, limitCap)
	for {
		hits, err := s.search(ctx, q, fetch)
		if err != nil {
			return nil, err
		}
		sortHits(hits)
		// Done unless the run of scores equal to the last kept hit reaches the
		// end of what was fetched and more could have been fetched.
		if len(hits) <= q.Limit || len(hits) < fetch || fetch >= limitCap ||
			hits[q.Limit-1].Score != hits[len(hits)-1].Score {
			if len(hits) > q.Limit {
				hits = hits[:q.Limit]
			}
			return hits, nil
		}
		fetch = min(fetch*2, limitCap)
	}
}

// sortHits orders by descending score, then ascending document id.
func sortHits(hits []retrieval.Hit) {
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].Doc.ID < hits[j].Doc.ID
	})
}

func (s *Store) search(ctx context.Context, q retrieval.Query, limit int) ([]retrieval.Hit, error) {
	if s.rpc != nil {
		return s.rpcSearch(ctx, q, limit)
	}
	gql := s.client.GraphQL()
	add := []graphql.Field{{Name: "id"}}
	get := s.get().WithLimit(limit)
	switch q.Mode {
	case retrieval.BM25:
		get = get.WithBM25(gql.Bm25ArgBuilder().WithQuery(q.Text).WithProperties(searchProps...))
		add = append(add, graphql.Field{Name: "score"}, graphql.Field{Name: "explainScore"})
	case retrieval.Vector:
		get = get.WithNearVector(gql.NearVectorArgBuilder().WithVector(q.Vector))
		add = append(add, graphql.Field{Name: "distance"})
	case retrieval.Hybrid:
		h := gql.HybridArgumentBuilder().WithQuery(q.Text).WithAlpha(float32(q.Alpha)).WithProperties(searchProps)
		if q.Alpha > 0 {
			h = h.WithVector(q.Vector)
		}
		if q.Fusion == retrieval.RankedFusion {
			h = h.WithFusionType(graphql.Ranked)
		} else {
			h = h.WithFusionType(graphql.RelativeScore)
		}
		get = get.WithHybrid(h)
		add = append(add, graphql.Field{Name: "score"}, graphql.Field{Name: "explainScore"})
	}
	if q.WithVectors {
		add = append(add, graphql.Field{Name: "vector"})
	}
	if w := where(q.Filter); w != nil {
		get = get.WithWhere(w)
	}
	if s.cfg.Tenant != "" {
		get = get.WithTenant(s.cfg.Tenant)
	}
	get = get.WithFields(docFields(add)...)
	objs, err := s.run(ctx, "search", get.Do)
	if err != nil {
		return nil, err
	}
	return hitsOf(objs, q.Mode, toHit)
}

// hitsOf converts a search's results (GraphQL objects or gRPC results) to
// hits, in order.
func hitsOf[R any](rs []R, mode retrieval.Mode, hit func(R, retrieval.Mode) (retrieval.Hit, error)) ([]retrieval.Hit, error) {
	hits := make([]retrieval.Hit, 0, len(rs))
	for _, r := range rs {
		h, err := hit(r, mode)
		if err != nil {
			return nil, errs.Wrap(errs.Internal, err, "weaviate search: unexpected result")
		}
		hits = append(hits, h)
	}
	return hits, nil
}

// run executes a Get query and returns the objects of the class.
func (s *Store) run(ctx context.Context, op string, do func(context.Context) (*models.GraphQLResponse, error)) ([]map[string]any, error) {
	res, err := do(ctx)
	if err != nil {
		return nil, unavailable(ctx, op, err)
	}
	if res == nil {
		return nil, unavailable(ctx, op, fmt.Errorf("empty response"))
	}
	if err := gqlError(res.Errors); err != nil {
		return nil, unavailable(ctx, op, err)
	}
	get, ok := res.Data["Get"].(map[string]any)
	if !ok {
		return nil, unavailable(ctx, op, fmt.Errorf("response without Get: %v", res.Data))
	}
	raw, ok := get[s.cfg.Class].([]any)
	if !ok {
		if get[s.cfg.Class] == nil {
			return nil, nil
		}
		return nil, unavailable(ctx, op, fmt.Errorf("response Get.%s is %T, not a list", s.cfg.Class, get[s.cfg.Class]))
	}
	out := make([]map[string]any, 0, len(raw))
	for _, r := range raw {
		m, ok := r.(map[string]any)
		if !ok {
			return nil, unavailable(ctx, op, fmt.Errorf("response object is %T", r))
		}
		out = append(out, m)
	}
	return out, nil
}

func docFields(additional []graphql.Field) []graphql.Field {
	return []graphql.Field{
		{Name: propDocID}, {Name: propTitle}, {Name: propText}, {Name: propEntities},
		{Name: "_additional", Fields: additional},
	}
}

// where builds the filter: documents among IDs and linked to any of
// AnyEntities. Both properties use field tokenization, so ContainsAny
// compares whole values.
func where(f retrieval.Filter) *filters.WhereBuilder {
	var ops []*filters.WhereBuilder
	if len(f.IDs) > 0 {
		ops = append(ops, filters.Where().WithPath([]string{propDocID}).WithOperator(filters.ContainsAny).WithValueText(f.IDs...))
	}
	if len(f.AnyEntities) > 0 {
		ops = append(ops, filters.Where().WithPath([]string{propEntities}).WithOperator(filters.ContainsAny).WithValueText(f.AnyEntities...))
	}
	switch len(ops) {
	case 0:
		return nil
	case 1:
		return ops[0]
	}
	return filters.Where().WithOperator(filters.And).WithOperands(ops)
}

// toHit reads one result object.
func toHit(o map[string]any, mode retrieval.Mode) (retrieval.Hit, error) {
	d, add, err := toDoc(o)
	if err != nil {
		return retrieval.Hit{}, err
	}
	h := retrieval.Hit{Doc: d}
	switch mode {
	case retrieval.Vector:
		dist, ok := add["distance"].(float64)
		if !ok {
			return h, fmt.Errorf("document %q: no distance", d.ID)
		}
		h.Score = 1 - dist
		h.Explain = "cosine distance " + strconv.FormatFloat(dist, 'g', -1, 64)
	default:
		// GraphQL gives the score as a string.
		sc, _ := add["score"].(string)
		v, err := strconv.ParseFloat(sc, 64)
		if err != nil {
			return h, fmt.Errorf("document %q: score %q: %w", d.ID, sc, err)
		}
		h.Score = v
		// BM25's starts with ", " and hybrid's with a newline.
		h.Explain, _ = add["explainScore"].(string)
		h.Explain = strings.TrimPrefix(strings.TrimSpace(h.Explain), ", ")
	}
	return h, nil
}

func toDoc(o map[string]any) (retrieval.Document, map[string]any, error) {
	var d retrieval.Document
	var ok bool
	if d.ID, ok = o[propDocID].(string); !ok || d.ID == "" {
		return d, nil, fmt.Errorf("object without %s: %v", propDocID, o["_additional"])
	}
	d.Title, _ = o[propTitle].(string)
	d.Text, _ = o[propText].(string)
	if es, ok := o[propEntities].([]any); ok {
		for _, e := range es {
			if s, ok := e.(string); ok {
				d.Entities = append(d.Entities, s)
			}
		}
	}
	if m, ok := o[propMetadata].(string); ok && m != "" {
		d.Metadata = json.RawMessage(m)
	}
	add, _ := o["_additional"].(map[string]any)
	if vs, ok := add["vector"].([]any); ok && len(vs) > 0 {
		d.Vector = make([]float32, len(vs))
		for i, v := range vs {
			f, ok := v.(float64)
			if !ok {
				return d, nil, fmt.Errorf("document %q: vector element %d is %T", d.ID, i, v)
			}
			d.Vector[i] = float32(f)
		}
	}
	return d, add, nil
}

// Documents returns the stored documents (with vectors) for ids, in the
// order of ids; unknown ids are skipped.
func (s *Store) Documents(ctx context.Context, ids []string) ([]retrieval.Document, error) {
	byID := make(map[string]retrieval.Document, len(ids))
	want := storableIDs(ids, nil)
	for start := 0; start < len(want); start += idChunk {
		docs, err := s.documents(ctx, want[start:min(start+idChunk, len(want))])
		if err != nil {
			return nil, err
		}
		for _, d := range docs {
			byID[d.ID] = d
		}
	}
	out := make([]retrieval.Document, 0, len(byID))
	for _, id := range ids {
		if d, ok := byID[id]; ok {
			out = append(out, d)
		}
	}
	return out, nil
}

// documents are the stored documents among ids (at most idChunk).
func (s *Store) documents(ctx context.Context, ids []string) ([]retrieval.Document, error) {
	if s.rpc != nil {
		return s.rpcDocuments(ctx, ids)
	}
	get := s.get().WithLimit(len(ids)).
		WithWhere(where(retrieval.Filter{IDs: ids})).
		WithFields(append(docFields([]graphql.Field{{Name: "id"}, {Name: "vector"}}), graphql.Field{Name: propMetadata})...)
	if s.cfg.Tenant != "" {
		get = get.WithTenant(s.cfg.Tenant)
	}
	objs, err := s.run(ctx, "get documents", get.Do)
	if err != nil {
		return nil, err
	}
	out := make([]retrieval.Document, 0, len(objs))
	for _, o := range objs {
		d, _, err := toDoc(o)
		if err != nil {
			return nil, errs.Wrap(errs.Internal, err, "weaviate get documents: unexpected result")
		}
		out = append(out, d)
	}
	return out, nil
}

// idChunk is how many document ids one query lists (ContainsAny on docId).
const idChunk = 1000

// storableIDs are the distinct ids that a stored document can have
// (printable), in order, and among allowed when it is not empty.
func storableIDs(ids, allowed []string) []string {
	in := make(map[string]bool, len(allowed))
	for _, id := range allowed {
		in[id] = true
	}
	var out []string
	seen := map[string]bool{}
	for _, id := range ids {
		if !seen[id] && isPrintable(id) && (len(allowed) == 0 || in[id]) {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

var _ retrieval.CosineReader = (*Store)(nil)

// Cosines implements retrieval.CosineReader: per 1,000 ids, one vector
// search restricted to them (and to f) that asks for document ids and
// distances only, so no text or vector crosses the wire. An allow list that
// short is searched exactly (Weaviate's flat search below
// flatSearchCutoff, 40,000), so every document of ids that passes f comes
// back, with 1 - its cosine distance as Search's vector scores.
func (s *Store) Cosines(ctx context.Context, v []float32, ids []string, f retrieval.Filter) (map[string]float64, error) {
	if len(v) == 0 {
		return nil, errs.Field("vector", "cosines need a vector")
	}
	if err := finite(v); err != nil {
		return nil, errs.Field("vector", "%v", err)
	}
	out := map[string]float64{}
	f, none := cleanFilter(f)
	if none {
		return out, ctx.Err()
	}
	want := storableIDs(ids, f.IDs)
	for start := 0; start < len(want); start += idChunk {
		dist, err := s.distances(ctx, v, want[start:min(start+idChunk, len(want))], f)
		if err != nil {
			return nil, err
		}
		for id, d := range dist {
			out[id] = 1 - d
		}
	}
	return out, ctx.Err()
}

// distances are the cosine distances to v of the documents among ids (at
// most idChunk) that pass f's entity filter, by document id.
func (s *Store) distances(ctx context.Context, v []float32, ids []string, f retrieval.Filter) (map[string]float64, error) {
	if s.rpc != nil {
		return s.rpcDistances(ctx, v, ids, f)
	}
	gql := s.client.GraphQL()
	get := s.get().WithLimit(len(ids)).
		WithNearVector(gql.NearVectorArgBuilder().WithVector(v)).
		WithWhere(where(retrieval.Filter{IDs: ids, AnyEntities: f.AnyEntities})).
		WithFields(graphql.Field{Name: propDocID}, graphql.Field{Name: "_additional", Fields: []graphql.Field{{Name: "distance"}}})
	if s.cfg.Tenant != "" {
		get = get.WithTenant(s.cfg.Tenant)
	}
	objs, err := s.run(ctx, "cosines", get.Do)
	if err != nil {
		return nil, err
	}
	out := make(map[string]float64, len(objs))
	for _, o := range objs {
		id, _ := o[propDocID].(string)
		add, _ := o["_additional"].(map[string]any)
		dist, ok := add["distance"].(float64)
		if id == "" || !ok {
			return nil, errs.E(errs.Internal, "weaviate cosines: unexpected result %v", o)
		}
		out[id] = dist
	}
	return out, nil
}

// cleanFilter drops filter values that cannot be stored ids or QIDs
// (unprintable characters, which Put refuses); none reports that a filter
// was asked for and nothing of it is left, so nothing can match.
func cleanFilter(f retrieval.Filter) (out retrieval.Filter, none bool) {
	keep := func(vs []string) ([]string, bool) {
		if len(vs) == 0 {
			return nil, false
		}
		var k []string
		for _, v := range vs {
			if v != "" && isPrintable(v) {
				k = append(k, v)
			}
		}
		return k, len(k) == 0
	}
	var n1, n2 bool
	out.IDs, n1 = keep(f.IDs)
	out.AnyEntities, n2 = keep(f.AnyEntities)
	return out, n1 || n2
}

// isPrintable reports whether s is valid UTF-8 of printable characters and
// spaces only: the client quotes strings with Go's %q, which is valid
// GraphQL exactly for such strings.
func isPrintable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// printable replaces invalid UTF-8 and unprintable characters with spaces.
// Weaviate's word tokenizer splits on them anyway, so BM25 sees the same
// tokens, and the client's %q quoting stays valid GraphQL.
func printable(s string) string {
	if isPrintable(s) {
		return s
	}
	s = strings.ToValidUTF8(s, " ")
	return strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return ' '
	}, s)
}

// finite rejects NaN and infinite components (the client would panic
// encoding them).
func finite(v []float32) error {
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("component %d is %v", i, x)
		}
	}
	return nil
}
