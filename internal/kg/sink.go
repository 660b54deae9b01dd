package kg

import (
	"context"
	"fmt"
)

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

// Aborter is implemented by sinks that can discard a failed load (the file
// sinks), leaving what an earlier run wrote in place.
type Aborter interface {
	Abort() error
}

// Finish ends a load into sink: after a successful one (err == nil) it closes
// the sink and returns the close error; after a failed one it aborts a sink
// that can be aborted, so that a failed run never replaces the output of a
// good one, closes any other, and returns err.
func Finish(ctx context.Context, sink Sink, err error) error {
	if err != nil {
		if a, ok := sink.(Aborter); ok {
			_ = a.Abort()
			return err
		}
		_ = sink.Close(ctx)
		return err
	}
	if cerr := sink.Close(ctx); cerr != nil {
		return fmt.Errorf("close sink: %w", cerr)
	}
	return nil
}
