package kgtest

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/dmar-kg/dmar/internal/kg"
)

// Written is what a sink's output holds once read back by the backend's own
// reader: the labels of the entities asked for, by QID, and the triples
// among them.
type Written struct {
	Labels  map[string]string
	Triples []kg.Triple
}

// SinkOutput is one empty output of a sink backend (a directory, a cleared
// database): Open starts a sink writing to it, as often as a test asks (a
// second run over a first one's output), and Read reads back what the
// closed sinks left there of the entities qids.
type SinkOutput struct {
	Open func(t *testing.T) kg.Sink
	Read func(t *testing.T, qids []string) Written
}

// RunSink checks the kg.Sink contract on a backend: fresh returns a new,
// empty output for each case. The cases: writes are idempotent (an entity
// or a triple written twice is held once); a triple that is not QID PID
// QID is refused; a load with nothing written closes cleanly and leaves
// nothing; a write under a done context fails; and, for a sink that can
// abort (kg.Aborter), kg.Finish after a failed run leaves the previous
// run's output as it was.
func RunSink(t *testing.T, fresh func(t *testing.T) SinkOutput) {
	c := newSinkCase(fresh)
	t.Run("WritesOnce", c.writesOnce)
	t.Run("RefusesBadTriples", c.refusesBadTriples)
	t.Run("EmptyLoad", c.emptyLoad)
	t.Run("DoneContext", c.doneContext)
	t.Run("FailedRunKeepsPrevious", c.failedRunKeepsPrevious)
}

// sinkCase holds RunSink's data: a small graph, the QIDs read back and
// what reading them back must give.
type sinkCase struct {
	fresh   func(t *testing.T) SinkOutput
	ents    []kg.Entity
	rels    []kg.Relation
	triples []kg.Triple
	qids    []string
	want    Written
}

func newSinkCase(fresh func(t *testing.T) SinkOutput) sinkCase {
	triples := []kg.Triple{{Head: "Q25188", PID: "P57", Tail: "Q25191"}, {Head: "Q25191", PID: "P19", Tail: "Q84"}}
	return sinkCase{
		fresh:   fresh,
		ents:    []kg.Entity{{QID: "Q25188", Label: "Inception"}, {QID: "Q25191", Label: "Christopher Nolan"}, {QID: "Q84", Label: "London"}},
		rels:    []kg.Relation{{PID: "P57", Label: "director"}, {PID: "P19", Label: "place of birth"}},
		triples: triples,
		qids:    []string{"Q25188", "Q25191", "Q84"},
		want:    Written{Labels: map[string]string{"Q25188": "Inception", "Q25191": "Christopher Nolan", "Q84": "London"}, Triples: sortedTriples(triples)},
	}
}

// load runs the steps on s in order, then closes it; any error fails t.
func (c sinkCase) load(t *testing.T, s kg.Sink, steps ...func() error) {
	t.Helper()
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatalf("close: %v", err)
	}
}

// read reads the case's QIDs back from out, triples sorted.
func (c sinkCase) read(t *testing.T, out SinkOutput) Written {
	t.Helper()
	w := out.Read(t, c.qids)
	w.Triples = sortedTriples(w.Triples)
	return w
}

// writesOnce: an entity or a triple written twice is held once.
func (c sinkCase) writesOnce(t *testing.T) {
	ctx := context.Background()
	out := c.fresh(t)
	s := out.Open(t)
	c.load(t, s,
		func() error { return s.WriteRelations(ctx, c.rels) },
		func() error { return s.WriteEntities(ctx, c.ents[:2]) },
		func() error { return s.WriteEntities(ctx, c.ents) }, // Q25188 and Q25191 again
		func() error { return s.WriteTriples(ctx, append(c.triples[:1:1], c.triples...)) },
		func() error { return s.WriteTriples(ctx, c.triples[1:]) })
	if d := gocmp.Diff(c.want, c.read(t, out)); d != "" {
		t.Errorf("read back (-want +got):\n%s", d)
	}
}

// refusesBadTriples: a triple that is not QID PID QID is refused.
func (c sinkCase) refusesBadTriples(t *testing.T) {
	ctx := context.Background()
	out := c.fresh(t)
	for _, bad := range []kg.Triple{{Head: "Q1", PID: "P31) DETACH DELETE (n", Tail: "Q2"}, {Head: "Paris", PID: "P17", Tail: "Q142"}, {Head: "Q1", PID: "Q31", Tail: "Q2"}} {
		s := out.Open(t)
		if err := s.WriteTriples(ctx, []kg.Triple{bad}); err == nil {
			t.Errorf("triple %v was accepted", bad)
		}
		_ = kg.Finish(ctx, s, errors.New("refused"))
	}
}

// emptyLoad: a load with nothing written closes cleanly and leaves nothing.
func (c sinkCase) emptyLoad(t *testing.T) {
	out := c.fresh(t)
	s := out.Open(t)
	c.load(t, s)
	if got := c.read(t, out); len(got.Labels) != 0 || len(got.Triples) != 0 {
		t.Errorf("nothing written, read back %+v", got)
	}
}

// doneContext: a write under a done context fails.
func (c sinkCase) doneContext(t *testing.T) {
	out := c.fresh(t)
	s := out.Open(t)
	done, cancel := context.WithCancel(context.Background())
	cancel()
	err := s.WriteTriples(done, c.triples)
	if err == nil {
		err = s.WriteEntities(done, c.ents)
	}
	if err == nil {
		t.Error("writes under a done context succeeded")
	}
	_ = kg.Finish(context.Background(), s, err)
}

// failedRunKeepsPrevious: for a sink that can abort, kg.Finish after a
// failed run leaves the previous run's output as it was.
func (c sinkCase) failedRunKeepsPrevious(t *testing.T) {
	ctx := context.Background()
	out := c.fresh(t)
	if _, ok := out.Open(t).(kg.Aborter); !ok {
		t.Skip("the sink cannot abort: a failed load keeps what it wrote")
	}
	s := out.Open(t)
	c.load(t, s,
		func() error { return s.WriteRelations(ctx, c.rels) },
		func() error { return s.WriteEntities(ctx, c.ents) },
		func() error { return s.WriteTriples(ctx, c.triples) })
	again := out.Open(t)
	if err := again.WriteEntities(ctx, []kg.Entity{{QID: "Q25188", Label: "overwritten"}, {QID: "Q1", Label: "other"}}); err != nil {
		t.Fatal(err)
	}
	failed := errors.New("the source broke")
	if err := kg.Finish(ctx, again, failed); !errors.Is(err, failed) {
		t.Fatalf("Finish after a failed load: %v, want the load's error", err)
	}
	if d := gocmp.Diff(c.want, c.read(t, out)); d != "" {
		t.Errorf("after a failed second run (-first run +read back):\n%s", d)
	}
}

func sortedTriples(ts []kg.Triple) []kg.Triple {
	out := slices.Clone(ts)
	slices.SortFunc(out, func(a, b kg.Triple) int {
		return cmp.Or(strings.Compare(a.Head, b.Head), strings.Compare(a.PID, b.PID), strings.Compare(a.Tail, b.Tail))
	})
	return out
}
