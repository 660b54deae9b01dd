package weaviate

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/weaviate/weaviate/entities/models"
)

// Property names of the collection.
const (
	propDocID    = "docId"
	propTitle    = "title"
	propText     = "text"
	propEntities = "entities"
	propMetadata = "metadata"
)

// searchProps are the properties BM25 (and hybrid's keyword half) scores.
var searchProps = []string{propTitle, propText}

// classDef is the collection dmar creates:
//   - docId: the document id, tokenization field (the whole string is one
//     token), filterable only, so filters match ids exactly.
//   - title, text: tokenization word — split on every character that is not
//     a letter or digit, lower-cased — which is the tokenisation made for
//     BM25 on prose: "Nolan's" and "Nolan," both give "nolan", hyphenated
//     words split, punctuation never becomes part of a token. (lowercase and
//     whitespace keep punctuation glued to words; field and trigram are for
//     exact and fuzzy matching.) Weaviate has no stemmer, so neither does the
//     embedded index. Stop words: Weaviate's "en" preset, which drops 33
//     function words from queries only (documents keep them, and they count
//     in document lengths).
//   - entities: text[] of linked QIDs, tokenization field, filterable only.
//   - metadata: the JSON text of the document's Metadata, as given (absent
//     when nil), neither searchable nor filterable: it is kept here so
//     that every dmar replica over the collection returns the same.
//   - vectors: dmar's own (vectorizer none), HNSW with cosine distance.
//
// BM25 k1 and b come from cfg; Weaviate scores title and text each with BM25
// and sums them (see docs/weaviate.md for the exact formula).
func classDef(cfg Config) *models.Class {
	f, t := false, true
	desc := "dmar corpus documents (title, text, linked entity QIDs) with dmar's encoder vectors"
	if cfg.Encoder != "" {
		desc += encoderMark + cfg.Encoder
	}
	cls := &models.Class{
		Class:       cfg.Class,
		Description: desc,
		Vectorizer:  "none",
		// The rest of the HNSW config is cfg's or Weaviate's defaults (ef -1
		// = dynamic, efConstruction 128, maxConnections 32). No
		// quantization unless cfg.RQ asks for it, even where the server sets
		// DEFAULT_QUANTIZATION: the graph walked on compressed vectors can
		// miss hits the embedded index finds (their scores are rescored).
		VectorIndexType:   "hnsw",
		VectorIndexConfig: hnswConfig(cfg),
		InvertedIndexConfig: &models.InvertedIndexConfig{
			Bm25:      &models.BM25Config{K1: float32(cfg.K1), B: float32(cfg.B)},
			Stopwords: &models.StopwordConfig{Preset: "en"},
		},
		MultiTenancyConfig: &models.MultiTenancyConfig{Enabled: cfg.Tenant != ""},
		Properties: []*models.Property{
			{Name: propDocID, DataType: []string{"text"}, Tokenization: "field", IndexFilterable: &t, IndexSearchable: &f},
			{Name: propTitle, DataType: []string{"text"}, Tokenization: "word", IndexFilterable: &t, IndexSearchable: &t},
			{Name: propText, DataType: []string{"text"}, Tokenization: "word", IndexFilterable: &f, IndexSearchable: &t},
			{Name: propEntities, DataType: []string{"text[]"}, Tokenization: "field", IndexFilterable: &t, IndexSearchable: &f},
			metadataProp(),
		},
	}
	replicationDef(cfg, cls)
	return cls
}

// hnswConfig is the collection's vector index configuration.
func hnswConfig(cfg Config) map[string]any {
	c := map[string]any{"distance": "cosine", "skipDefaultQuantization": true}
	if cfg.EfConstruction > 0 {
		c["efConstruction"] = cfg.EfConstruction
	}
	if cfg.MaxConnections > 0 {
		c["maxConnections"] = cfg.MaxConnections
	}
	if cfg.RQ > 0 {
		delete(c, "skipDefaultQuantization")
		c["rq"] = map[string]any{"enabled": true, "bits": cfg.RQ, "rescoreLimit": 200}
	}
	return c
}

// ensureSchema creates the collection if it is missing and checks that an
// existing one has what dmar needs; with a tenant, it creates the tenant too.
func (s *Store) ensureSchema(ctx context.Context) error {
	cls, err := s.client.Schema().ClassGetter().WithClassName(s.cfg.Class).Do(ctx)
	if err != nil && !isStatus(err, http.StatusNotFound) {
		return unavailable(ctx, "read collection "+s.cfg.Class, err)
	}
	if (err != nil || cls == nil) && !s.cfg.Create {
		return errs.E(errs.NotFound, "weaviate collection %s does not exist; load a corpus into it first (dmar load corpus --index weaviate://HOST:PORT/%s)", s.cfg.Class, s.cfg.Class)
	}
	if err != nil || cls == nil {
		if err := s.client.Schema().ClassCreator().WithClass(classDef(s.cfg)).Do(ctx); err != nil {
			// Another loader may have created it meanwhile.
			if cls2, err2 := s.client.Schema().ClassGetter().WithClassName(s.cfg.Class).Do(ctx); err2 != nil || cls2 == nil {
				return unavailable(ctx, "create collection "+s.cfg.Class, err)
			}
		}
		if cls, err = s.client.Schema().ClassGetter().WithClassName(s.cfg.Class).Do(ctx); err != nil {
			return unavailable(ctx, "read collection "+s.cfg.Class, err)
		}
	}
	if err := checkClass(cls, s.cfg); err != nil {
		return err
	}
	if err := s.ensureMetadata(ctx, cls); err != nil {
		return err
	}
	s.replicated = isReplicated(cls)
	if s.cfg.Tenant == "" {
		if len(s.cfg.hosts()) > 1 {
			return s.waitLoaded(ctx, cls)
		}
		return nil
	}
	return s.ensureTenant(ctx)
}

// metadataProp is the metadata property: stored and returned only, with no
// inverted index.
func metadataProp() *models.Property {
	f := false
	return &models.Property{Name: propMetadata, DataType: []string{"text"}, IndexFilterable: &f, IndexSearchable: &f}
}

// ensureMetadata adds the metadata property to a collection created before
// collections had it. Its objects keep working: they have no value for it,
// and the document store then returns the metadata its own log recorded.
func (s *Store) ensureMetadata(ctx context.Context, cls *models.Class) error {
	if hasProperty(cls, propMetadata) {
		return nil
	}
	err := s.client.Schema().PropertyCreator().WithClassName(s.cfg.Class).WithProperty(metadataProp()).Do(ctx)
	if err == nil {
		return nil
	}
	// Another dmar may have added it meanwhile.
	if cls2, err2 := s.client.Schema().ClassGetter().WithClassName(s.cfg.Class).Do(ctx); err2 == nil && hasProperty(cls2, propMetadata) {
		return nil
	}
	return unavailable(ctx, "add property "+propMetadata+" to collection "+s.cfg.Class, err)
}

func hasProperty(cls *models.Class, name string) bool {
	for _, p := range cls.Properties {
		if p.Name == name {
			return true
		}
	}
	return false
}

// encoderMark ends the description of a collection created with
// Config.Encoder set, before the encoder's version.
const encoderMark = "; encoder: "

// classEncoder is the encoder version a collection records, "" for one
// created before collections recorded it.
func classEncoder(cls *models.Class) string {
	if i := strings.LastIndex(cls.Description, encoderMark); i >= 0 {
		return cls.Description[i+len(encoderMark):]
	}
	return ""
}

// checkClass refuses a collection that dmar cannot search correctly.
func checkClass(cls *models.Class, cfg Config) error {
	if got := classEncoder(cls); got != "" && cfg.Encoder != "" && got != cfg.Encoder {
		return fmt.Errorf("weaviate: collection %s was loaded with encoder %s, not the configured %s; set models.encoder (DMAR_ENCODER) back, "+
			"or drop the collection and reload it with this encoder (dmar load corpus --index weaviate://HOST:PORT/%s), or load into another collection", cfg.Class, got, cfg.Encoder, cfg.Class)
	}
	if err := checkReplication(cls, cfg); err != nil {
		return err
	}
	mt := cls.MultiTenancyConfig != nil && cls.MultiTenancyConfig.Enabled
	switch {
	case cfg.Tenant != "" && !mt:
		return fmt.Errorf("weaviate: collection %s is not multi-tenant but tenant %q was asked for; use another collection", cfg.Class, cfg.Tenant)
	case cfg.Tenant == "" && mt:
		return fmt.Errorf("weaviate: collection %s is multi-tenant; name a tenant (?tenant=NAME)", cfg.Class)
	}
	if vc, ok := cls.VectorIndexConfig.(map[string]any); ok {
		if d, _ := vc["distance"].(string); d != "" && d != "cosine" {
			return fmt.Errorf("weaviate: collection %s uses %s distance, dmar needs cosine; drop and reload it", cfg.Class, d)
		}
	}
	want := map[string]string{propDocID: "field", propTitle: "word", propText: "word", propEntities: "field"}
	for _, p := range cls.Properties {
		if tok, ok := want[p.Name]; ok {
			if p.Tokenization != tok {
				return fmt.Errorf("weaviate: collection %s property %s has tokenization %q, dmar needs %q; drop and reload it", cfg.Class, p.Name, p.Tokenization, tok)
			}
			delete(want, p.Name)
		}
	}
	if len(want) > 0 {
		return fmt.Errorf("weaviate: collection %s lacks properties %v; it was not created by dmar", cfg.Class, slices.Collect(maps.Keys(want)))
	}
	return nil
}

func (s *Store) ensureTenant(ctx context.Context) error {
	ok, err := s.client.Schema().TenantsExists().WithClassName(s.cfg.Class).WithTenant(s.cfg.Tenant).Do(ctx)
	if err != nil {
		return unavailable(ctx, "check tenant "+s.cfg.Tenant, err)
	}
	if ok {
		return nil
	}
	if !s.cfg.Create {
		return errs.E(errs.NotFound, "weaviate collection %s has no tenant %q; load a corpus into it first", s.cfg.Class, s.cfg.Tenant)
	}
	err = s.client.Schema().TenantsCreator().WithClassName(s.cfg.Class).
		WithTenants(models.Tenant{Name: s.cfg.Tenant, ActivityStatus: models.TenantActivityStatusHOT}).Do(ctx)
	if err != nil {
		if ok, err2 := s.client.Schema().TenantsExists().WithClassName(s.cfg.Class).WithTenant(s.cfg.Tenant).Do(ctx); err2 == nil && ok {
			return nil // created by someone else meanwhile
		}
		return unavailable(ctx, "create tenant "+s.cfg.Tenant, err)
	}
	return nil
}

// ping waits for nothing: one GET of the readiness endpoint under ctx.
func ping(ctx context.Context, base string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	status, err := readiness(ctx, http.DefaultClient.Do, base)
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("GET %s/v1/.well-known/ready: status %d", base, status)
	}
	return err
}

// readiness is the status of a GET of base's readiness endpoint, sent by do.
func readiness(ctx context.Context, do func(*http.Request) (*http.Response, error), base string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/.well-known/ready", http.NoBody)
	if err != nil {
		return 0, err
	}
	resp, err := do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
