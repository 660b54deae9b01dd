// Package loaders holds the sources that fill a knowledge graph (a Wikidata
// JSON dump, the KG bundle format, a SPARQL endpoint) and the Sink they write
// to. Sinks live with what they write: CSV files for neo4j-admin import, Bolt
// batches for a running Neo4j, a bundle directory for the embedded graph.
package loaders

import (
	"context"

	"github.com/dmar-kg/dmar/internal/kg"
)

// Sink receives a graph in batches. Writes are idempotent: writing an entity
// or a triple twice leaves one. Close flushes; a Sink is not used after Close.
type Sink interface {
	WriteEntities(ctx context.Context, es []kg.Entity) error
	WriteTriples(ctx context.Context, ts []kg.Triple) error
	WriteRelations(ctx context.Context, rs []kg.Relation) error
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
