package kg

import "context"

// Sink receives a graph in batches: the port every loader (a Wikidata dump,
// a SPARQL endpoint, a bundle) writes to, and that graph stores and file
// formats implement (CSV files for neo4j-admin import, Bolt batches for a
// running Neo4j, a bundle directory for the embedded graph). Writes are
// idempotent: writing an entity or a triple twice leaves one. Close flushes;
// a Sink is not used after Close.
type Sink interface {
	WriteEntities(ctx context.Context, es []Entity) error
	WriteTriples(ctx context.Context, ts []Triple) error
	WriteRelations(ctx context.Context, rs []Relation) error
	Close(ctx context.Context) error
}

// Counts is what every load reports at its end: Read = Loaded + Filtered + Bad.
type Counts struct {
	Read     int      `json:"read"`
	Loaded   int      `json:"loaded"`
	Filtered int      `json:"filtered"`
	Bad      int      `json:"bad"`
	Problems []string `json:"problems,omitempty"` // the first few reasons for Bad
}
