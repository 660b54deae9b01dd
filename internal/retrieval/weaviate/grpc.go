package weaviate

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/retrieval"
	pb "github.com/weaviate/weaviate/grpc/generated/protocol/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Searches go over Weaviate's gRPC Search API (protocol v1, the generated
// package the v4 client already imports for its batches) whenever the store
// has a gRPC address: GraphQL sends every vector as JSON text, about 4 KB
// per document, which the client then decodes into maps, and that was most
// of a search's time; gRPC sends vectors as float32 bytes. The answers are
// GraphQL's, value for value: the same documents, vectors, scores and
// distances (GraphQL sends them as the shortest decimals of their float32s,
// which decimal32 reproduces) and explanations; a test compares the paths.

// maxMessage is the largest reply accepted: Weaviate's own default limit
// (GRPC_MAX_MESSAGE_SIZE). A 10,000-hit search with texts and vectors is
// about 30 MB.
const maxMessage = 100 << 20

// rpc is a store's gRPC connection.
type rpc struct {
	conn *grpc.ClientConn
	c    pb.WeaviateClient
	md   metadata.MD // the API key's bearer token, or empty
}

// newRPC connects (lazily: the first call dials) to addr, with TLS when the
// REST endpoint is HTTPS.
func newRPC(addr string, secure bool, apiKey string) (*rpc, error) {
	cred := insecure.NewCredentials()
	if secure {
		cred = credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12})
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(cred), grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessage)))
	if err != nil {
		return nil, fmt.Errorf("weaviate grpc %s: %w", addr, err)
	}
	r := &rpc{conn: conn, c: pb.NewWeaviateClient(conn)}
	if apiKey != "" {
		r.md = metadata.Pairs("authorization", "Bearer "+apiKey)
	}
	return r, nil
}

// call runs one Search request on the store's collection (and tenant),
// bounded by the store's timeout as its HTTP requests are.
func (s *Store) call(ctx context.Context, op string, req *pb.SearchRequest) ([]*pb.SearchResult, error) {
	req.Collection, req.Tenant, req.Uses_127Api = s.cfg.Class, s.cfg.Tenant, true
	c, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	if len(s.rpc.md) > 0 {
		c = metadata.NewOutgoingContext(c, s.rpc.md)
	}
	res, err := s.search1(c, req)
	if err != nil {
		return nil, rpcError(ctx, op, err)
	}
	return res.GetResults(), nil
}

// rpcError classifies a failed call as unavailable does: the caller's own
// cancellation as such, a request Weaviate refused as malformed or
// unauthorised as our bug (Internal), anything else as an outage.
func rpcError(ctx context.Context, op string, err error) error {
	if ctx.Err() == nil {
		switch status.Code(err) {
		case codes.InvalidArgument, codes.NotFound, codes.FailedPrecondition, codes.Unimplemented,
			codes.Unauthenticated, codes.PermissionDenied, codes.OutOfRange:
			return errs.Wrap(errs.Internal, err, "weaviate %s was rejected", op)
		}
	}
	return unavailable(ctx, op, err)
}

// rpcSearch is one BM25, vector or hybrid search of limit hits.
func (s *Store) rpcSearch(ctx context.Context, q retrieval.Query, limit int) ([]retrieval.Hit, error) {
	req := &pb.SearchRequest{
		Limit:      uint32(limit),
		Filters:    rpcFilter(q.Filter),
		Properties: &pb.PropertiesRequest{NonRefProperties: docProps},
		Metadata:   &pb.MetadataRequest{Vector: q.WithVectors},
	}
	switch q.Mode {
	case retrieval.BM25:
		req.Bm25Search = &pb.BM25{Query: q.Text, Properties: searchProps}
		req.Metadata.Score, req.Metadata.ExplainScore = true, true
	case retrieval.Vector:
		req.NearVector = &pb.NearVector{VectorBytes: vectorBytes(q.Vector)}
		req.Metadata.Distance = true
	case retrieval.Hybrid:
		h := &pb.Hybrid{Query: q.Text, Properties: searchProps, Alpha: float32(q.Alpha), FusionType: pb.Hybrid_FUSION_TYPE_RELATIVE_SCORE}
		if q.Alpha > 0 {
			h.VectorBytes = vectorBytes(q.Vector)
		}
		if q.Fusion == retrieval.RankedFusion {
			h.FusionType = pb.Hybrid_FUSION_TYPE_RANKED
		}
		req.HybridSearch = h
		req.Metadata.Score, req.Metadata.ExplainScore = true, true
	}
	res, err := s.call(ctx, "search", req)
	if err != nil {
		return nil, err
	}
	return hitsOf(res, q.Mode, rpcHit)
}

// rpcDocuments are the stored documents among ids (at most idChunk), with
// their vectors.
func (s *Store) rpcDocuments(ctx context.Context, ids []string) ([]retrieval.Document, error) {
	res, err := s.call(ctx, "get documents", &pb.SearchRequest{
		Limit:      uint32(len(ids)),
		Filters:    rpcFilter(retrieval.Filter{IDs: ids}),
		Properties: &pb.PropertiesRequest{NonRefProperties: storedProps},
		Metadata:   &pb.MetadataRequest{Vector: true},
	})
	if err != nil {
		return nil, err
	}
	out := make([]retrieval.Document, 0, len(res))
	for _, r := range res {
		d, err := rpcDoc(r)
		if err != nil {
			return nil, errs.Wrap(errs.Internal, err, "weaviate get documents: unexpected result")
		}
		out = append(out, d)
	}
	return out, nil
}

// rpcDistances are the cosine distances to v of the documents among ids (at
// most idChunk) that pass f, by document id: a vector search restricted to
// them that returns their ids and distances only.
func (s *Store) rpcDistances(ctx context.Context, v []float32, ids []string, f retrieval.Filter) (map[string]float64, error) {
	res, err := s.call(ctx, "cosines", &pb.SearchRequest{
		Limit:      uint32(len(ids)),
		NearVector: &pb.NearVector{VectorBytes: vectorBytes(v)},
		Filters:    rpcFilter(retrieval.Filter{IDs: ids, AnyEntities: f.AnyEntities}),
		Properties: &pb.PropertiesRequest{NonRefProperties: []string{propDocID}},
		Metadata:   &pb.MetadataRequest{Distance: true},
	})
	if err != nil {
		return nil, err
	}
	out := make(map[string]float64, len(res))
	for _, r := range res {
		id := text(r.GetProperties().GetNonRefProps().GetFields()[propDocID])
		if id == "" || !r.GetMetadata().GetDistancePresent() {
			return nil, errs.E(errs.Internal, "weaviate cosines: unexpected result %v", r)
		}
		out[id] = decimal32(r.GetMetadata().GetDistance())
	}
	return out, nil
}

// docProps are the properties a document is read from.
var docProps = []string{propDocID, propTitle, propText, propEntities}

// storedProps are those of a document read by id: its metadata too.
var storedProps = append(docProps[:len(docProps):len(docProps)], propMetadata)

// rpcFilter is where's filter on the gRPC API; nil restricts nothing.
func rpcFilter(f retrieval.Filter) *pb.Filters {
	anyOf := func(prop string, vs []string) *pb.Filters {
		return &pb.Filters{
			Operator:  pb.Filters_OPERATOR_CONTAINS_ANY,
			Target:    &pb.FilterTarget{Target: &pb.FilterTarget_Property{Property: prop}},
			TestValue: &pb.Filters_ValueTextArray{ValueTextArray: &pb.TextArray{Values: vs}},
		}
	}
	var ops []*pb.Filters
	if len(f.IDs) > 0 {
		ops = append(ops, anyOf(propDocID, f.IDs))
	}
	if len(f.AnyEntities) > 0 {
		ops = append(ops, anyOf(propEntities, f.AnyEntities))
	}
	switch len(ops) {
	case 0:
		return nil
	case 1:
		return ops[0]
	}
	return &pb.Filters{Operator: pb.Filters_OPERATOR_AND, Filters: ops}
}

// rpcHit reads one search result as toHit reads GraphQL's.
func rpcHit(r *pb.SearchResult, mode retrieval.Mode) (retrieval.Hit, error) {
	d, err := rpcDoc(r)
	if err != nil {
		return retrieval.Hit{}, err
	}
	h := retrieval.Hit{Doc: d}
	m := r.GetMetadata()
	switch mode {
	case retrieval.Vector:
		if !m.GetDistancePresent() {
			return h, fmt.Errorf("document %q: no distance", d.ID)
		}
		dist := decimal32(m.GetDistance())
		h.Score = 1 - dist
		h.Explain = "cosine distance " + strconv.FormatFloat(dist, 'g', -1, 64)
	default:
		if !m.GetScorePresent() {
			return h, fmt.Errorf("document %q: no score", d.ID)
		}
		h.Score = decimal32(m.GetScore())
		h.Explain = strings.TrimPrefix(strings.TrimSpace(m.GetExplainScore()), ", ")
	}
	return h, nil
}

// decimal32 is a float32 as GraphQL gives scores and distances: the
// shortest decimal that reads back as the same float32, read as a float64.
func decimal32(f float32) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(float64(f), 'g', -1, 32), 64)
	return v
}

// rpcDoc reads a result's document: its properties and, when asked for,
// its vector.
func rpcDoc(r *pb.SearchResult) (retrieval.Document, error) {
	var d retrieval.Document
	props := r.GetProperties().GetNonRefProps().GetFields()
	if d.ID = text(props[propDocID]); d.ID == "" {
		return d, fmt.Errorf("object %s without %s", r.GetMetadata().GetId(), propDocID)
	}
	d.Title, d.Text = text(props[propTitle]), text(props[propText])
	if l := props[propEntities].GetListValue(); l != nil {
		if tv := l.GetTextValues(); tv != nil {
			d.Entities = append(d.Entities, tv.GetValues()...)
		}
		for _, v := range l.GetValues() { //nolint:staticcheck // older servers answer in the deprecated list form
			d.Entities = append(d.Entities, text(v))
		}
	}
	if m := text(props[propMetadata]); m != "" {
		d.Metadata = json.RawMessage(m)
	}
	if b := r.GetMetadata().GetVectorBytes(); len(b) > 0 {
		if len(b)%4 != 0 {
			return d, fmt.Errorf("document %q: vector of %d bytes", d.ID, len(b))
		}
		d.Vector = make([]float32, len(b)/4)
		for i := range d.Vector {
			d.Vector[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
	}
	return d, nil
}

// text is a text property's value ("" when absent).
func text(v *pb.Value) string {
	if s := v.GetTextValue(); s != "" {
		return s
	}
	return v.GetStringValue() //nolint:staticcheck // older servers answer in the deprecated string form
}

// vectorBytes is v as the gRPC API takes it: little-endian float32s.
func vectorBytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}
