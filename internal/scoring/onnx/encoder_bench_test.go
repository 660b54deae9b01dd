package onnx_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/dmar-kg/dmar/internal/datapath"
	"github.com/dmar-kg/dmar/internal/datapath/datatest"
	"github.com/dmar-kg/dmar/internal/scoring/onnx"
)

// kgqaQuestions reads n real questions (kgqa/train.jsonl) to encode.
func kgqaQuestions(tb testing.TB, n int) []string {
	return datasetTexts(tb, "kgqa", "train.jsonl", n, func(r textRecord) string { return r.Question })
}

// codexmExtracts reads n real documents (codexm/corpus.jsonl extracts); most
// run to the 256-token limit.
func codexmExtracts(tb testing.TB, n int) []string {
	return datasetTexts(tb, "codexm", "corpus.jsonl", n, func(r textRecord) string { return r.Text })
}

// textRecord holds the fields the tests read from a dataset's JSONL lines.
type textRecord struct {
	Question string `json:"question"`
	Title    string `json:"title"`
	Text     string `json:"text"`
}

// datasetTexts reads the text of each of the first n records of a shared
// dataset's JSONL file; the test is skipped where the data is not present.
func datasetTexts(tb testing.TB, dataset, file string, n int, text func(textRecord) string) []string {
	tb.Helper()
	dir, err := datapath.Dataset(dataset)
	if err != nil {
		tb.Skip(err)
	}
	path := filepath.Join(dir, file)
	if _, err := os.Stat(path); err != nil {
		tb.Skip(err)
	}
	var out []string
	for _, r := range datatest.JSONL[textRecord](tb, path, n) {
		out = append(out, text(r))
	}
	return out
}

// BenchmarkEncoder reports sentences/s for real questions, one per call
// beside 32 per call, in one run:
//
//	go test -run '^$' -bench Encoder -benchtime 64x ./internal/scoring/onnx/
func BenchmarkEncoder(b *testing.B) {
	e := testEncoder(b, onnx.WithBatchSize(32))
	qs := kgqaQuestions(b, 512)
	bench(b, e, "questions", qs)
}

// BenchmarkEncoderDocuments is the load-time cost: whole codexm extracts.
//
//	go test -run '^$' -bench EncoderDocuments -benchtime 8x ./internal/scoring/onnx/
func BenchmarkEncoderDocuments(b *testing.B) {
	e := testEncoder(b, onnx.WithBatchSize(32))
	bench(b, e, "extracts", codexmExtracts(b, 256))
}

func bench(b *testing.B, e *onnx.Encoder, name string, qs []string) {
	for _, batch := range []int{1, 32} {
		b.Run(fmt.Sprintf("%s/batch=%d", name, batch), func(b *testing.B) {
			ctx := context.Background()
			if _, err := e.Encode(ctx, qs[:batch]); err != nil { // warm-up
				b.Fatal(err)
			}
			b.ResetTimer()
			n := 0
			for i := 0; b.Loop(); i++ {
				lo := (i * batch) % (len(qs) - batch)
				if _, err := e.Encode(ctx, qs[lo:lo+batch]); err != nil {
					b.Fatal(err)
				}
				n += batch
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "sentences/s")
		})
	}
}
