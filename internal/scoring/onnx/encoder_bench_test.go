package onnx_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/dmar-kg/dmar/internal/datapath"
	"github.com/dmar-kg/dmar/internal/scoring/onnx"
)

// kgqaQuestions reads n real questions (kgqa/train.jsonl) to encode.
func kgqaQuestions(tb testing.TB, n int) []string {
	tb.Helper()
	dir, err := datapath.Dataset("kgqa")
	if err != nil {
		tb.Skip(err)
	}
	f, err := os.Open(filepath.Join(dir, "train.jsonl"))
	if err != nil {
		tb.Skip(err)
	}
	defer f.Close()
	var qs []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() && len(qs) < n {
		var q struct {
			Question string `json:"question"`
		}
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			tb.Fatal(err)
		}
		qs = append(qs, q.Question)
	}
	return qs
}

// BenchmarkEncoder reports sentences/s for real questions, one per call
// beside 32 per call, in one run:
//
//	go test -run '^$' -bench Encoder -benchtime 64x ./internal/scoring/onnx/
func BenchmarkEncoder(b *testing.B) {
	e := testEncoder(b, onnx.WithBatchSize(32))
	qs := kgqaQuestions(b, 512)
	for _, batch := range []int{1, 32} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
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
