package eval

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/dmar-kg/dmar/internal/corpus"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/npy"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/pipeline/kgchan"
	"github.com/dmar-kg/dmar/internal/progress"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/scoring"
)

// ProjectionEncoder gives the relation projection's input for text with
// each of cuts cut, from one encoding of text (onnx.Encoder); an entry is
// nil where it cannot.
type ProjectionEncoder interface {
	ProjectionFeatures(ctx context.Context, text string, cuts [][]scoring.Span) ([][]float32, error)
}

// RelProjectionData is what RelProjectionFeatures exports from.
type RelProjectionData struct {
	Questions   []Question
	Options     pipeline.Options // the questions are linked as requests with these are
	CorpusFiles []string         // the corpus the sentences are drawn from
	Sentences   int              // corpus sentences drawn
	Seed        uint64           // the draw's and the cut spans' seed
}

// RelProjectionFeatures writes the relation projection's training data
// under out (models/relproj/train.py reads it):
//
//	x.npy      [N,F] float32 the projection's input for each text
//	y.npy      [N,D] float32 the relation encoder's vector of the same text
//	texts.jsonl per row: the text the relation encoder read, its source
//	           (question or sentence), whether a span was cut and, on a
//	           question's row the graph channel reads (masked when linking
//	           cut something), the relation steps from its linked entities
//	           to its gold entity in one hop (2i forwards, 2i+1 backwards)
//	rels.json  the relations met one hop from the questions' entities: {pid, label}
//	relvec.npy [2R,D] float32 their texts under the relation encoder,
//	           forwards (2i) and backwards (2i+1)
//
// Each question gives a row as asked and, when linking cuts something, a
// row masked as the graph channel masks it; each drawn corpus sentence
// gives a row whole and one with a random span of one to three words cut.
// A text the encoder cannot cut cleanly is skipped and counted.
func RelProjectionFeatures(ctx context.Context, p GraphSource, enc ProjectionEncoder, rel scoring.Encoder, d RelProjectionData, out string, stderr io.Writer) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	w := projWriter{ctx: ctx, enc: enc}
	rels := &relIndex{idx: map[graphRel]int{}}
	m := progress.New(stderr, "relproj features", "texts", len(d.Questions)+d.Sentences)
	for _, q := range d.Questions {
		if err := ctx.Err(); err != nil {
			return err
		}
		m.Add(1)
		ms, row, err := linkedSteps(ctx, p, q, d.Options, rels)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			w.failed++
			fmt.Fprintf(stderr, "relproj features: skipped %s: %v\n", q.ID, err)
			continue
		}
		if err := w.add(q.Question, kgchan.MaskMentions(q.Question, ms), kgchan.MentionSpans(q.Question, ms), "question", goldSteps(row, q.Gold)); err != nil {
			return err
		}
	}
	var docs []retrieval.Document
	if d.Sentences > 0 {
		var err error
		if docs, _, err = corpus.ReadFiles(ctx, d.CorpusFiles); err != nil {
			return err
		}
	}
	rng := rand.New(rand.NewPCG(d.Seed, d.Seed^0x9e3779b97f4a7c15))
	for _, s := range drawSentences(docs, d.Sentences, rng) {
		masked, spans := cutWords(s, rng)
		if err := w.add(s, masked, spans, "sentence", nil); err != nil {
			return err
		}
		m.Add(1)
	}
	m.Done()
	if err := writeRelations(ctx, rel, rels.rels, out); err != nil {
		return err
	}
	return w.write(ctx, rel, out, stderr)
}

// linkedSteps are q's mentions, linked as a request with opts links them,
// and its one-hop neighbourhood's paths (graphFeatureRow).
func linkedSteps(ctx context.Context, p GraphSource, q Question, opts pipeline.Options, rels *relIndex) ([]kg.Mention, graphFeatureQuestion, error) {
	row, _, ms, err := graphFeatureRow(ctx, p, q, opts, 1, rels.of)
	return ms, row, err
}

// goldSteps are the steps (2 * relation + backward) of row's one-hop paths
// that end at a gold entity.
func goldSteps(row graphFeatureQuestion, gold []string) []int {
	g := set(gold)
	steps := []int{}
	for _, c := range row.Cands {
		if !g[c.Entity] {
			continue
		}
		for _, p := range c.P1 {
			if s := 2*p[1] + p[2]; !slices.Contains(steps, s) {
				steps = append(steps, s)
			}
		}
	}
	slices.Sort(steps)
	return steps
}

// projWriter gathers the rows.
type projWriter struct {
	ctx     context.Context
	enc     ProjectionEncoder
	x       []float32
	texts   []projText
	width   int
	skipped int // texts the encoder could not cut
	failed  int // questions whose link or walk failed
}

type projText struct {
	Text   string `json:"text"`
	Source string `json:"source"`
	Masked bool   `json:"masked"`
	Steps  []int  `json:"steps,omitempty"`
}

// add adds text's rows: as it is and, unless masked is empty or text
// itself, with spans cut (masked is then the text the relation encoder
// reads). steps go on the row the graph channel would read.
func (w *projWriter) add(text, masked string, spans []scoring.Span, source string, steps []int) error {
	rows, cuts := []projText{{text, source, false, steps}}, [][]scoring.Span{nil}
	if masked != "" && masked != strings.TrimSpace(text) {
		rows[0].Steps = nil
		rows, cuts = append(rows, projText{masked, source, true, steps}), append(cuts, spans)
	}
	fs, err := w.enc.ProjectionFeatures(w.ctx, text, cuts)
	if err != nil {
		return fmt.Errorf("encode %q: %w", text, err)
	}
	for i, f := range fs {
		if f == nil {
			w.skipped++
			continue
		}
		w.width = len(f)
		w.x = append(w.x, f...)
		w.texts = append(w.texts, rows[i])
	}
	return nil
}

// write encodes the rows' texts with the relation encoder and writes the
// files.
func (w *projWriter) write(ctx context.Context, rel scoring.Encoder, out string, stderr io.Writer) error {
	var y []float32
	for i := 0; i < len(w.texts); i += 256 {
		batch := make([]string, 0, 256)
		for _, t := range w.texts[i:min(i+256, len(w.texts))] {
			batch = append(batch, t.Text)
		}
		vs, err := rel.Encode(ctx, batch)
		if err != nil {
			return fmt.Errorf("relation encoder: %w", err)
		}
		for _, v := range vs {
			y = append(y, v...)
		}
	}
	if err := npy.Write(filepath.Join(out, "x.npy"), w.x, len(w.texts), w.width); err != nil {
		return err
	}
	if err := npy.Write(filepath.Join(out, "y.npy"), y, len(w.texts), rel.Dim()); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(out, "texts.jsonl"))
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	enc := json.NewEncoder(bw)
	for _, t := range w.texts {
		if err := enc.Encode(t); err != nil {
			f.Close()
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "relproj features: %d rows written, %d texts skipped (a cut inside a word piece), %d questions skipped (failed) -> %s\n", len(w.texts), w.skipped, w.failed, out)
	return nil
}

var sentenceEnd = regexp.MustCompile(`[.!?]\s+`)

// drawSentences draws n sentences of 20 to 200 bytes from the first three
// of each document's text, with rng.
func drawSentences(docs []retrieval.Document, n int, rng *rand.Rand) []string {
	var all []string
	for _, d := range docs {
		at := 0
		for i, loc := range append(sentenceEnd.FindAllStringIndex(d.Text, 3), []int{len(d.Text), len(d.Text)}) {
			if i == 3 {
				break
			}
			s := strings.TrimSpace(d.Text[at:min(loc[0]+1, len(d.Text))])
			if len(s) > 20 && len(s) < 200 {
				all = append(all, s)
			}
			at = loc[1]
		}
	}
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	return all[:min(n, len(all))]
}

var word = regexp.MustCompile(`\S+`)

// cutWords is s with a random run of one to three of its words cut, and the
// cut's span.
func cutWords(s string, rng *rand.Rand) (string, []scoring.Span) {
	words := word.FindAllStringIndex(s, -1)
	i := rng.IntN(len(words))
	j := min(len(words), i+1+rng.IntN(3)) - 1
	sp := scoring.Span{Start: words[i][0], End: words[j][1]}
	return strings.Join(strings.Fields(s[:sp.Start]+" "+s[sp.End:]), " "), []scoring.Span{sp}
}
