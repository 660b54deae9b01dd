// Package neo4jkg is the knowledge graph on Neo4j: kg.Graph (with kg.Pinger,
// kg.Inspector and kg.Recorder) over the Bolt protocol, the Bolt loader
// (a kg.Sink), and document mentions. Every statement it runs is a file
// of package cypher; the graph model is described in docs/neo4j.md:
//
//	(:Entity {qid, label, description, aliases, names, degree})
//	(:Entity)-[:P31 {pid, label}]->(:Entity)     one per statement, typed by PID
//	(:Document {id, title})-[:MENTIONS]->(:Entity)
//	(:Retrieval {id, query, reformulated, at})-[:ANCHOR {rank, score}]->(:Document)
package neo4jkg

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j/config"

	"github.com/dmar-kg/dmar/cypher"
	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/kg"
)

var (
	_ kg.Graph     = (*Store)(nil)
	_ kg.Pinger    = (*Store)(nil)
	_ kg.Inspector = (*Store)(nil)
	_ kg.Recorder  = (*Store)(nil)
)

// Config says where Neo4j is.
type Config struct {
	URI      string // bolt://127.0.0.1:7687 or neo4j://host:7687
	User     string // default "neo4j"; used only with a Password
	Password string // empty: no authentication
	Database string // default "neo4j"
	// RetryTime bounds the driver's retries of one transaction (default 5s):
	// past it the call fails as unavailable rather than hang a request.
	RetryTime time.Duration
}

// Store is a Neo4j-backed knowledge graph, safe for concurrent use.
type Store struct {
	driver neo4j.DriverWithContext
	db     string
	q      cypher.Set
	// statements counts the statements sent (round trips), for tests and
	// benchmarks that check how many a call takes.
	statements atomic.Int64
}

// Statements returns how many statements the store has sent to Neo4j since
// it was opened, migrations included: each is one round trip.
func (s *Store) Statements() int64 { return s.statements.Load() }

// Open connects to Neo4j, checks that it answers and applies the schema
// migrations not yet recorded in the database. A Neo4j that cannot be reached
// gives an error with code errs.Unavailable.
func Open(ctx context.Context, c Config) (*Store, error) {
	q, migrations, err := cypher.Load()
	if err != nil {
		return nil, err
	}
	if c.URI == "" {
		return nil, errors.New("neo4jkg: no URI (set DMAR_NEO4J_URI, e.g. bolt://127.0.0.1:7687)")
	}
	if c.Database == "" {
		c.Database = "neo4j"
	}
	if c.User == "" {
		c.User = "neo4j"
	}
	if c.RetryTime == 0 {
		c.RetryTime = 5 * time.Second
	}
	auth := neo4j.NoAuth()
	if c.Password != "" {
		auth = neo4j.BasicAuth(c.User, c.Password, "")
	}
	d, err := neo4j.NewDriverWithContext(c.URI, auth, func(cf *config.Config) {
		cf.MaxTransactionRetryTime = c.RetryTime
		cf.SocketConnectTimeout = 5 * time.Second
		cf.ConnectionAcquisitionTimeout = 10 * time.Second
	})
	if err != nil {
		return nil, fmt.Errorf("neo4jkg: %w", err)
	}
	s := &Store{driver: d, db: c.Database, q: q}
	if err := d.VerifyConnectivity(ctx); err != nil {
		d.Close(context.Background())
		return nil, s.wrap(ctx, "connect to "+c.URI, err)
	}
	if err := s.migrate(ctx, migrations); err != nil {
		d.Close(context.Background())
		return nil, err
	}
	return s, nil
}

// Close releases the driver's connections.
func (s *Store) Close(ctx context.Context) error { return s.driver.Close(ctx) }

// Ping implements kg.Pinger: a RETURN 1 round trip.
func (s *Store) Ping(ctx context.Context) error {
	_, err := s.read(ctx, "ping", cypher.Ping, nil)
	return err
}

// migrate applies, in order, the migrations not recorded as (:Migration {n}),
// records each, then waits for the indexes to come online. Every migration is
// idempotent (IF NOT EXISTS), so two processes racing here are harmless.
func (s *Store) migrate(ctx context.Context, ms []cypher.Migration) error {
	res, err := s.read(ctx, "list migrations", cypher.MigrationsApplied, nil)
	if err != nil {
		return err
	}
	done := map[int64]bool{}
	for _, r := range res.Records {
		if n, ok := r.Values[0].(int64); ok {
			done[n] = true
		}
	}
	applied := false
	for _, m := range ms {
		if done[int64(m.N)] {
			continue
		}
		// Schema commands cannot share a transaction with data writes.
		if _, err := s.write(ctx, fmt.Sprintf("migration %03d_%s", m.N, m.Name), m.Statement, nil, true); err != nil {
			return err
		}
		if _, err := s.write(ctx, "record migration", s.q.Get(cypher.MigrationRecord), map[string]any{"n": m.N, "name": m.Name}, true); err != nil {
			return err
		}
		applied = true
	}
	if applied {
		if _, err := s.write(ctx, "await indexes", "CALL db.awaitIndexes(300)", nil, true); err != nil {
			return err
		}
	}
	return nil
}

// read runs a named read query in a managed transaction (retried on
// transient failures) and collects the result.
func (s *Store) read(ctx context.Context, op, name string, params map[string]any) (*neo4j.EagerResult, error) {
	s.statements.Add(1)
	res, err := neo4j.ExecuteQuery(ctx, s.driver, s.q.Get(name), params, neo4j.EagerResultTransformer,
		neo4j.ExecuteQueryWithDatabase(s.db), neo4j.ExecuteQueryWithReadersRouting())
	if err != nil {
		return nil, s.wrap(ctx, op, err)
	}
	return res, nil
}

// write runs a statement (a named query's text or a migration) that writes.
func (s *Store) write(ctx context.Context, op, statement string, params map[string]any, raw bool) (*neo4j.EagerResult, error) {
	if !raw {
		statement = s.q.Get(statement)
	}
	s.statements.Add(1)
	res, err := neo4j.ExecuteQuery(ctx, s.driver, statement, params, neo4j.EagerResultTransformer,
		neo4j.ExecuteQueryWithDatabase(s.db), neo4j.ExecuteQueryWithWritersRouting())
	if err != nil {
		return nil, s.wrap(ctx, op, err)
	}
	return res, nil
}

// wrap adds context to a driver error and marks outages as errs.Unavailable.
func (s *Store) wrap(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		err = fmt.Errorf("%w (%v)", cerr, err)
	}
	err = fmt.Errorf("neo4jkg: %s: %w", op, err)
	if ctx.Err() == nil && unavailable(err) {
		return errs.Unavail(err, "neo4j")
	}
	return err
}

// unavailable reports errors that mean Neo4j cannot answer now, as opposed
// to a wrong statement or bad data.
func unavailable(err error) bool {
	var ne *neo4j.Neo4jError
	if errors.As(err, &ne) {
		return strings.HasPrefix(ne.Code, "Neo.TransientError.") ||
			ne.Code == "Neo.ClientError.Database.DatabaseNotFound" ||
			strings.HasPrefix(ne.Code, "Neo.ClientError.Security.")
	}
	var ce *neo4j.ConnectivityError
	var tl *neo4j.TransactionExecutionLimit
	var oe *net.OpError
	return errors.As(err, &ce) || errors.As(err, &tl) || errors.As(err, &oe) ||
		neo4j.IsRetryable(err) || errors.Is(err, context.DeadlineExceeded) ||
		strings.Contains(err.Error(), "connection refused")
}
