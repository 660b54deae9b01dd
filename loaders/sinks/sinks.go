// Package sinks opens the kg.Sink a loader writes to, from the target the
// load commands take: csv:DIR (neo4j-admin import files), bundle:DIR (a dmar
// KG bundle) or a Neo4j URL (online Bolt MERGEs). It is the one place a sink
// is chosen.
package sinks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/dmar-kg/dmar/internal/config"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/bundle"
	"github.com/dmar-kg/dmar/internal/kg/neo4jkg"
	"github.com/dmar-kg/dmar/loaders/bundlesink"
	"github.com/dmar-kg/dmar/loaders/neo4jcsv"
)

// ErrTarget marks a target that names no sink (a usage error).
var ErrTarget = errors.New("bad sink target")

type targetError struct{ msg string }

func (e targetError) Error() string        { return e.msg }
func (e targetError) Is(target error) bool { return target == ErrTarget }

// TargetError is an ErrTarget with msg as its message.
func TargetError(msg string) error { return targetError{msg} }

// files maps the scheme of a file target to its sink.
var files = map[string]func(dir string) (kg.Sink, error){
	"csv": func(dir string) (kg.Sink, error) {
		// Both loaders hand each triple over once, so no dedup set is needed.
		return neo4jcsv.New(dir, neo4jcsv.Options{UniqueTriples: true})
	},
	"bundle": func(dir string) (kg.Sink, error) {
		return bundlesink.New(dir), nil
	},
}

// Open opens the sink of target to (flag names it in errors): a Neo4j URL
// (config.ParseGraph's schemes, credentials from DMAR_NEO4J_* through
// getenv), else csv:DIR or bundle:DIR. A target that names no sink is an
// ErrTarget.
func Open(ctx context.Context, flag, to string, getenv func(string) string) (kg.Sink, error) {
	scheme, _, _ := strings.Cut(to, ":")
	if !slices.Contains(config.GraphSchemes, scheme) {
		return OpenFile(flag, to)
	}
	if _, err := config.ParseGraph(to); err != nil {
		return nil, TargetError(flag + " " + err.Error())
	}
	n, ps := config.Neo4jEnv(getenv)
	if err := ps.Err(); err != nil {
		return nil, err
	}
	return OpenBolt(ctx, neo4jkg.Config{URI: to, User: n.User, Password: n.Password.Reveal(), Database: n.Database})
}

// OpenFile opens a csv:DIR or bundle:DIR target (flag names it in errors).
func OpenFile(flag, to string) (kg.Sink, error) {
	scheme, rest, ok := strings.Cut(to, ":")
	if !ok || rest == "" {
		return nil, TargetError(fmt.Sprintf("%s %q: want csv:DIR, bundle:DIR or neo4j://HOST:PORT", flag, to))
	}
	open, found := files[scheme]
	if !found {
		return nil, TargetError(fmt.Sprintf("%s %q: unknown sink %q (csv:DIR, bundle:DIR, neo4j://HOST:PORT)", flag, to, scheme))
	}
	return open(rest)
}

// boltSink is neo4jkg's Bolt loader plus the connection it owns.
type boltSink struct {
	*neo4jkg.Sink
	store *neo4jkg.Store
}

func (b boltSink) Close(ctx context.Context) error {
	err := b.Sink.Close(ctx)
	return errors.Join(err, b.store.Close(context.Background()))
}

// OpenBolt loads online into the Neo4j of cfg in batches of MERGEs; for a
// full dump use csv:DIR and neo4j-admin import instead.
func OpenBolt(ctx context.Context, cfg neo4jkg.Config) (kg.Sink, error) {
	st, err := neo4jkg.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	s, err := st.NewSink(neo4jkg.SinkOptions{})
	if err != nil {
		st.Close(context.Background())
		return nil, err
	}
	return boltSink{Sink: s, store: st}, nil
}

// StreamBundle streams the KG bundle in dir into sink, the file sink of
// target (OpenFile), so that a large bundle never has to fit in memory on
// its way to neo4j-admin import, and reports the counts on w.
func StreamBundle(ctx context.Context, dir, target string, sink kg.Sink, w io.Writer) error {
	start := time.Now()
	st, err := bundle.Stream(ctx, dir, sink, 0)
	if err := kg.Finish(ctx, sink, err); err != nil {
		return fmt.Errorf("load kg --to %s: %w", target, err)
	}
	fmt.Fprintf(w, "load kg: %s to %s: entities read %d, loaded %d, duplicates %d, bad %d; triples read %d, loaded %d, duplicates %d, bad %d (%.1fs)\n",
		dir, target, st.EntitiesRead, st.EntitiesLoaded, st.EntitiesDuplicate, st.EntitiesBad,
		st.TriplesRead, st.TriplesLoaded, st.TriplesDuplicate, st.TriplesBad, time.Since(start).Seconds())
	for _, p := range st.Problems {
		fmt.Fprintln(w, "  skipped:", p)
	}
	return nil
}
