package main

import (
	"context"
	"fmt"
	"io"

	"github.com/dmar-kg/dmar/internal/backends"
	"github.com/dmar-kg/dmar/internal/bench"
	"github.com/dmar-kg/dmar/internal/eval"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/retrieval/memindex"
	"github.com/dmar-kg/dmar/internal/retrieval/weaviate"
	"github.com/dmar-kg/dmar/internal/synth"
)

func init() {
	register("bench scale", "ingest rate, memory, hybrid search and default request latency at growing corpus sizes (real, then synthetic documents), embedded and with --index in Weaviate; ends with scale_ratio=R", runBenchScale)
}

// runBenchScale: dmar bench scale --data DIR [--index weaviate://HOST:PORT] --sizes 16000,128000,1000000
func runBenchScale(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var a appFlags
	var f bench.ScaleFlags
	fs := a.flags("bench scale", stderr)
	f.Register(fs)
	if err := a.parse(fs, args); err != nil {
		return err
	}
	sizes, err := f.ParseSizes()
	if err != nil {
		return cliErr(err)
	}
	qfile, err := f.QuestionFile()
	if err != nil {
		return cliErr(err)
	}
	questions, err := bench.ReadQuestions(qfile, 0)
	if err != nil {
		return err
	}
	remote := a.cfg.Index
	cfg := a.cfg
	cfg.Index = "embedded" // the --data corpus, linked and embedded, is what the sizes are made of
	log := warnLogger(stderr)
	set, err := backends.Open(ctx, cfg, stderr, log)
	if err != nil {
		return err
	}
	defer set.Close()
	real, ok := set.Index.(*memindex.Index)
	if !ok {
		return fmt.Errorf("bench scale: the embedded index is a %T", set.Index)
	}
	qvecs, err := set.Models.Encoder.Encode(ctx, questions)
	if err != nil {
		return err
	}
	opts, err := pipeline.Defaults().WithMethod(cfg.Method)
	if err != nil {
		return err
	}
	b := bench.Scale{Sizes: sizes, Real: real.All(), Synth: synth.Config{Seed: f.Seed}, Questions: questions, QVecs: qvecs,
		Requests: f.Requests, Options: opts, Encoder: set.Models.Encoder,
		Pipeline: func(x retrieval.Index) (*pipeline.Pipeline, error) {
			set.Index = x
			return set.Pipeline(nil, log, false)
		},
		Embedded: func(ctx context.Context, docs []retrieval.Document) (bench.EmbeddedIndex, error) {
			x := memindex.New(memindex.DefaultParams())
			if err := x.Put(ctx, docs); err != nil {
				return nil, err
			}
			x.Build()
			return x, nil
		}}
	if f.Quality {
		if b.Quality, err = eval.Open("kgqa:"+qfile, 0); err != nil {
			return err
		}
		if b.QualitySystems, err = eval.Systems([]string{"dmar", "dense", "hybrid"}, pipeline.Defaults(), 20, 0.5); err != nil {
			return err
		}
	}
	if !a.cfg.IndexBackend().Embedded() {
		wc, err := weaviate.ParseURL(remote)
		if err != nil {
			return cliErr(err)
		}
		b.RemoteURL = wc.URL
		b.Remote = func(ctx context.Context, size int) (bench.RemoteIndex, error) {
			c := wc
			c.Class, c.Create, c.Encoder = fmt.Sprintf("DmarScale%d", size), true, set.Models.DocEncoder.Version()
			st, err := weaviate.New(ctx, c)
			if err != nil {
				return nil, err
			}
			if n, err := st.Count(ctx); err != nil || n > 0 { // a collection left by an interrupted run
				if err := st.Drop(ctx); err != nil {
					return nil, err
				}
				return weaviate.New(ctx, c)
			}
			return st, nil
		}
	}
	_, err = b.Run(ctx, stdout)
	return err
}
