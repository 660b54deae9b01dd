package main

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"

	"github.com/dmar-kg/dmar/internal/datapath"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/scoring"
	"github.com/dmar-kg/dmar/internal/scoring/onnx"
	"github.com/dmar-kg/dmar/internal/scoring/onnx/onnxtest"
)

// TestBatchedEncoderKeepsResults: dmar serve's pipeline (query encodings
// micro-batched across requests) answers concurrent requests with the same
// ranked documents and anchors as the pipeline without batching answers
// them one at a time, on the real encoders, GNN and codexm-film: with
// all-MiniLM-L6-v2 concurrent queries share model calls; with the default
// int8 encoder, whose vectors would depend on what shares a call, batches
// still group concurrent callers but each gets a call of its own, and the
// relation encoder's (all-MiniLM-L6-v2) masked questions share calls.
func TestBatchedEncoderKeepsResults(t *testing.T) {
	onnxtest.NeedFile(t, onnxtest.Config().LibPath, "the ONNX Runtime library")
	onnxtest.NeedEncoders(t, "", onnx.MiniLMName)
	for _, enc := range []string{onnx.MiniLMName, onnx.DefaultEncoderName} {
		t.Run(enc, func(t *testing.T) { batchedKeepsResults(t, enc) })
	}
}

func batchedKeepsResults(t *testing.T, encoder string) {
	film, err := datapath.Dataset("codexm-film")
	if err != nil {
		t.Skip("shared data not found:", err)
	}
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	open := func(serve bool) *pipeline.Pipeline {
		a := appFlags{serve: serve}
		fs := a.flags("serve", io.Discard)
		if err := a.parse(fs, []string{"--data", film, "--quiet", "--encoder", encoder, "--gnn", "../../models/gnn/gnn.onnx", "--gate", ""}); err != nil {
			t.Fatal(err)
		}
		p, set, err := a.pipelineFor(ctx, io.Discard, log, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(set.Close)
		return p
	}
	batched, plain := open(true), open(false)
	if _, ok := batched.Encoder().(*scoring.BatchEncoder); !ok {
		t.Fatalf("serve's encoder is %T, want the batching one", batched.Encoder())
	}
	if _, ok := plain.Encoder().(*scoring.BatchEncoder); ok {
		t.Fatal("a non-serve pipeline batches")
	}
	qs := []string{"Which films did Christopher Nolan direct?", "Who directed Inception?", "Who starred in The Dark Knight?",
		"Who composed the music of Interstellar?", "Which actors played in films directed by Steven Spielberg?",
		"What is the country of origin of Amélie?", "Who wrote the screenplay of Pulp Fiction?", "Which film won the Academy Award for Best Picture?"}
	ranked := func(r *pipeline.Result) (docs, anchors []string) {
		for _, d := range r.Results {
			docs = append(docs, d.ID)
		}
		for _, a := range r.Anchors {
			anchors = append(anchors, a.ID)
		}
		return docs, anchors
	}
	want := make([][2][]string, len(qs))
	for i, q := range qs {
		r, err := plain.Retrieve(ctx, q, plain.Defaults())
		if err != nil {
			t.Fatal(err)
		}
		want[i][0], want[i][1] = ranked(r)
	}
	// Every question twice at once, so that batches hold several queries.
	var wg sync.WaitGroup
	for round := range 2 {
		for i, q := range qs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := batched.Retrieve(ctx, q, batched.Defaults())
				if err != nil {
					t.Error(err)
					return
				}
				docs, anchors := ranked(r)
				if !slices.Equal(docs, want[i][0]) || !slices.Equal(anchors, want[i][1]) {
					t.Errorf("round %d, %q:\n batched docs %v anchors %v\n plain   docs %v anchors %v", round, q, docs, anchors, want[i][0], want[i][1])
				}
			}()
		}
	}
	wg.Wait()
	be := batched.Encoder().(*scoring.BatchEncoder)
	calls, texts := be.Stats()
	batches, callers := be.Grouping()
	t.Logf("%d callers in %d batches; %d queries in %d encoder calls", callers, batches, texts, calls)
	if callers <= batches {
		t.Errorf("%d batches held %d callers: no batch held two requests, so nothing was compared", batches, callers)
	}
	perCaller := encoder == onnx.DefaultEncoderName // int8: onnx EncoderSpec.PerText
	if !perCaller && texts <= calls {
		t.Errorf("%d batched calls held %d texts: no call held two queries, so nothing was compared", calls, texts)
	}
	if perCaller && calls != callers {
		t.Errorf("%d encoder calls for %d callers: with PerCaller each caller gets a call of its own", calls, callers)
	}
	if !perCaller {
		return
	}
	// With the int8 encoder the relation encoder (all-MiniLM-L6-v2) is a
	// model of its own, batched too: its masked questions share calls.
	re, ok := batched.RelationEncoder().(*scoring.BatchEncoder)
	if !ok {
		t.Fatalf("serve's relation encoder is %T, want the batching one", batched.RelationEncoder())
	}
	rcalls, rtexts := re.Stats()
	t.Logf("relation encoder: %d texts in %d calls", rtexts, rcalls)
	if rtexts <= rcalls {
		t.Errorf("%d relation encoder calls held %d texts: no call held two questions, so nothing was compared", rcalls, rtexts)
	}
}
