package backends

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/dmar-kg/dmar/internal/bench"
	"github.com/dmar-kg/dmar/internal/config"
	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/eval"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/retrieval/memindex"
	"github.com/dmar-kg/dmar/internal/retrieval/weaviate"
	"github.com/dmar-kg/dmar/internal/synth"
)

// RunScale runs dmar bench scale: a bench.Scale whose corpora grow from
// cfg's (linked and embedded, as the embedded index loads it) with
// synthetic documents, each size loaded into a fresh embedded index and,
// when cfg.Index names Weaviate, into a collection of its own there.
// Flags that cannot make a run are errs.Invalid.
func RunScale(ctx context.Context, cfg config.Config, f bench.ScaleFlags, stdout, stderr io.Writer, log *slog.Logger) error {
	sizes, err := f.ParseSizes()
	if err != nil {
		return err
	}
	qfile, err := f.QuestionFile()
	if err != nil {
		return errs.E(errs.Invalid, "%v", err)
	}
	questions, err := bench.ReadQuestions(qfile, 0)
	if err != nil {
		return err
	}
	sweep, err := f.ParseEfSweep()
	if err != nil {
		return err
	}
	remote := cfg.IndexBackend()
	if f.NoEmbedded && remote.Embedded() {
		return errs.E(errs.Invalid, "bench scale: --no-embedded needs --index with a Weaviate URL")
	}
	var wc weaviate.Config
	if !remote.Embedded() {
		if wc, err = weaviate.ParseURL(cfg.Index); err != nil {
			return errs.E(errs.Invalid, "bench scale: %v", err)
		}
	}
	cfg.Index = "embedded" // the cfg corpus, linked and embedded, is what the sizes are made of
	set, err := Open(ctx, cfg, stderr, log)
	if err != nil {
		return err
	}
	defer set.Close()
	embedded, ok := set.Index.(*memindex.Index)
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
	realDocs, err := embedded.ReadAll(ctx)
	if err != nil {
		return err
	}
	compact := cfg.Embedded.CompactVectors // --compact-vectors, the setting dmar serve reads too
	b := bench.Scale{Sizes: sizes, Real: realDocs, Synth: synth.Config{Seed: f.Seed}, Questions: questions, QVecs: qvecs,
		Requests: f.Requests, Options: opts, Encoder: set.Models.Encoder, ExactOnly: f.ANNMin < 0, CompactVectors: compact, EfSweep: sweep, RemoteOnly: f.NoEmbedded,
		Pipeline: func(x retrieval.Index) (*pipeline.Pipeline, error) {
			set.Index = x
			return set.Pipeline(nil, log, false)
		},
		Embedded: scaleIndex(f, cfg.Embedded, compact && remote.Embedded())}
	if f.Quality {
		if b.Quality, err = eval.Open("kgqa:"+qfile, 0); err != nil {
			return err
		}
		if b.QualitySystems, err = eval.Systems(strings.Split(f.QualitySys, ","), pipeline.Defaults(), 20, 0.5); err != nil {
			return fmt.Errorf("--quality-systems: %w", err)
		}
	}
	if !remote.Embedded() {
		b.RemoteURL = wc.URL
		b.Remote = func(ctx context.Context, size int) (bench.RemoteIndex, error) {
			return scaleCollection(ctx, wc, size, set.Models.DocEncoder.Version())
		}
	}
	_, err = b.Run(ctx, stdout)
	return err
}

// scaleIndex makes each size's embedded index: the flags' graph settings,
// the embedded setting's vectors, loaded by putScale (drop: see there) and
// its graph built.
func scaleIndex(f bench.ScaleFlags, e config.Embedded, drop bool) func(context.Context, []retrieval.Document) (bench.EmbeddedIndex, error) {
	return func(ctx context.Context, docs []retrieval.Document) (bench.EmbeddedIndex, error) {
		p := memindex.DefaultParams()
		p.ANNMin, p.ANNEf = f.ANNMin, f.ANNEf
		p.CompactVectors, p.VectorDir = e.CompactVectors, e.VectorDir
		x := memindex.New(p)
		if err := putScale(ctx, x, docs, drop); err != nil {
			x.Close() //nolint:errcheck // the put's error is the one to report
			return nil, err
		}
		if err := x.Build(ctx); err != nil {
			return nil, err
		}
		return x, nil
	}
}

// putScale loads docs into x. With drop (a compact index and no Weaviate
// to load after), it puts them a chunk at a time and drops each chunk's
// float32 vectors once they are in x's file, so that the corpus does not
// hold a second copy the index no longer needs.
func putScale(ctx context.Context, x *memindex.Index, docs []retrieval.Document, drop bool) error {
	if !drop {
		return x.Put(ctx, docs)
	}
	// Each write copies the posting map whole instead of layering it over
	// its parent's, which would keep the lists the next chunk replaces:
	// the index ends as one Put of everything leaves it.
	x.SetSharing(memindex.Sharing{Prepared: true, Postings: false})
	defer x.SetSharing(memindex.Sharing{Prepared: true, Postings: true})
	const chunk = 1 << 16
	for lo := 0; lo < len(docs); lo += chunk {
		part := docs[lo:min(lo+chunk, len(docs))]
		if err := x.Put(ctx, part); err != nil {
			return err
		}
		for i := range part {
			part[i].Vector = nil
		}
	}
	return nil
}

// scaleCollection is an empty collection DmarScaleSIZE on the Weaviate of
// wc (one left by an interrupted run is dropped and made again).
func scaleCollection(ctx context.Context, wc weaviate.Config, size int, encoder string) (*weaviate.Store, error) {
	wc.Class, wc.Create, wc.Encoder = fmt.Sprintf("DmarScale%d", size), true, encoder
	st, err := weaviate.New(ctx, wc)
	if err != nil {
		return nil, err
	}
	if n, err := st.Count(ctx); err != nil || n > 0 {
		if err := st.Drop(ctx); err != nil {
			return nil, err
		}
		return weaviate.New(ctx, wc)
	}
	return st, nil
}
