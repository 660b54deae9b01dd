package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/dmar-kg/dmar/internal/progress"
)

// CorpusEncoder is what Embed measures: a document encoder (truncated, with
// the passage prefix, as at load time) with its per-call path and its
// corpus path (onnx.Encoder).
type CorpusEncoder interface {
	Encode(ctx context.Context, texts []string) ([][]float32, error)
	EncodeCorpus(ctx context.Context, texts []string, m *progress.Meter) ([][]float32, error)
}

// BaselineChunk is how many documents in corpus order went to each Encode
// call at load time before EncodeCorpus (corpus.Prepare's batches).
const BaselineChunk = 32

// Embed is dmar bench embed: documents/s of corpus embedding for each
// encoder in one run, with the load path before EncodeCorpus (chunks of
// BaselineChunk documents in corpus order, sorted only within a chunk) as
// the baseline row, measured on the first encoder next to its fast path.
type Embed struct {
	Texts    []string // documents as the encoder reads them (corpus.EncodeText)
	Source   string   // where they came from, for the report
	Encoders []string // registry names; the first gets the baseline row
	// Open returns the document encoder called name and what frees it.
	Open func(name string) (CorpusEncoder, func(), error)
	// Rounds repeats the first encoder's baseline and fast rows alternately
	// (>= 1), so that a machine whose load changes meanwhile weighs on both.
	Rounds int
}

// EmbedRow is one measured configuration.
type EmbedRow struct {
	Encoder  string
	Path     string // "chunked" (the baseline) or "corpus" (EncodeCorpus)
	Docs     int
	Elapsed  time.Duration
	DocsPerS float64
	// CPU is the process's user+system time meanwhile: on a shared
	// machine docs per CPU second says what a path costs, where docs/s
	// also says how much of the machine the run got.
	CPU time.Duration
}

// Run embeds the texts with each encoder, writes a table and then one line
// per encoder, "ENCODER docs_per_s=X" (its corpus path), to stdout; progress
// goes to stderr.
func (b Embed) Run(ctx context.Context, stdout, stderr io.Writer) ([]EmbedRow, error) {
	if len(b.Texts) == 0 {
		return nil, errors.New("bench embed: no documents")
	}
	if len(b.Encoders) == 0 {
		return nil, errors.New("bench embed: no encoders")
	}
	rounds := max(b.Rounds, 1)
	var rows []EmbedRow
	for i, name := range b.Encoders {
		enc, closeEnc, err := b.Open(name)
		if err != nil {
			return rows, fmt.Errorf("bench embed: %s: %w", name, err)
		}
		got, err := b.measure(ctx, enc, name, i == 0, rounds, stderr)
		closeEnc()
		rows = append(rows, got...)
		if err != nil {
			return rows, err
		}
	}
	writeEmbed(stdout, b, rows)
	return rows, nil
}

// measure times one encoder: warm-up, then (first encoder) baseline and
// corpus rows alternately for rounds, else one corpus row.
func (b Embed) measure(ctx context.Context, enc CorpusEncoder, name string, baseline bool, rounds int, stderr io.Writer) ([]EmbedRow, error) {
	// The first call pays for the session's allocations; keep it untimed.
	if _, err := enc.Encode(ctx, b.Texts[:min(len(b.Texts), BaselineChunk)]); err != nil {
		return nil, fmt.Errorf("bench embed: %s: %w", name, err)
	}
	if !baseline {
		rounds = 1
	}
	var rows []EmbedRow
	for range rounds {
		if baseline {
			r, err := b.time(ctx, name, "chunked", stderr, func(m *progress.Meter) error {
				return chunkedEncode(ctx, enc, b.Texts, m)
			})
			if err != nil {
				return rows, err
			}
			rows = append(rows, r)
		}
		r, err := b.time(ctx, name, "corpus", stderr, func(m *progress.Meter) error {
			_, err := enc.EncodeCorpus(ctx, b.Texts, m)
			return err
		})
		if err != nil {
			return rows, err
		}
		rows = append(rows, r)
	}
	return rows, nil
}

func (b Embed) time(ctx context.Context, name, path string, stderr io.Writer, run func(*progress.Meter) error) (EmbedRow, error) {
	m := progress.New(stderr, "embed "+name+" "+path, "docs", len(b.Texts))
	start, cpu0 := time.Now(), cpuTime()
	if err := run(m); err != nil {
		return EmbedRow{}, fmt.Errorf("bench embed: %s %s: %w", name, path, err)
	}
	el, cpu := time.Since(start), cpuTime()-cpu0
	m.Done()
	return EmbedRow{Encoder: name, Path: path, Docs: len(b.Texts), Elapsed: el, DocsPerS: float64(len(b.Texts)) / el.Seconds(), CPU: cpu}, ctx.Err()
}

// chunkedEncode is the load path before EncodeCorpus: one Encode call per
// BaselineChunk documents, in corpus order.
func chunkedEncode(ctx context.Context, enc CorpusEncoder, texts []string, m *progress.Meter) error {
	for lo := 0; lo < len(texts); lo += BaselineChunk {
		hi := min(lo+BaselineChunk, len(texts))
		if _, err := enc.Encode(ctx, texts[lo:hi]); err != nil {
			return err
		}
		m.Add(hi - lo)
	}
	return nil
}

// cpuTime is the process's user and system time so far (0 where getrusage
// fails: the column then reads 0).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// meanRate is the documents/s of rows of one encoder and path over all
// their rounds (total documents over total time); 0 when there are none.
func meanRate(rows []EmbedRow, name, path string) float64 {
	var docs int
	var el time.Duration
	for _, r := range rows {
		if r.Encoder == name && r.Path == path {
			docs += r.Docs
			el += r.Elapsed
		}
	}
	if el <= 0 {
		return 0
	}
	return float64(docs) / el.Seconds()
}

func writeEmbed(w io.Writer, b Embed, rows []EmbedRow) {
	fmt.Fprintf(w, "corpus embedding: %d documents of %s\n\n", len(b.Texts), b.Source)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "encoder\tpath\tdocs\tseconds\tdocs/s\tCPU s\tdocs/CPU s\t")
	for _, r := range rows {
		perCPU := 0.0
		if r.CPU > 0 {
			perCPU = float64(r.Docs) / r.CPU.Seconds()
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t\n", r.Encoder, r.Path, r.Docs, r.Elapsed.Seconds(), r.DocsPerS, r.CPU.Seconds(), perCPU)
	}
	tw.Flush()
	first := b.Encoders[0]
	if base := meanRate(rows, first, "chunked"); base > 0 {
		fmt.Fprintf(w, "\n%s: corpus path %.2fx the chunked baseline (same run)\n", first, meanRate(rows, first, "corpus")/base)
	}
	fmt.Fprintln(w)
	for _, name := range b.Encoders {
		fmt.Fprintf(w, "%s docs_per_s=%.1f\n", name, meanRate(rows, name, "corpus"))
	}
}

// ParseEncoders splits a comma-separated --encoders value; empty names are
// an error.
func ParseEncoders(s string) ([]string, error) {
	var out []string
	for _, n := range strings.Split(s, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			return nil, fmt.Errorf("encoders %q: empty name", s)
		}
		out = append(out, n)
	}
	return out, nil
}
