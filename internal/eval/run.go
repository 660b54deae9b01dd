package eval

import (
	"context"
	"fmt"
	"github.com/dmar-kg/dmar/internal/answer"
	"io"
	"strconv"
	"time"

	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/progress"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/scoring"
)

// Retriever runs DMAR (pipeline.Pipeline satisfies it).
type Retriever interface {
	Retrieve(ctx context.Context, query string, o pipeline.Options) (*pipeline.Result, error)
}

// GraphWalker runs the pipeline's graph channel alone (the kg-walk system;
// pipeline.Pipeline satisfies it).
type GraphWalker interface {
	GraphWalk(ctx context.Context, query string, o pipeline.Options) (*pipeline.Result, error)
}

// TextWalker runs the peers' recipe on the text graph (the ppr system;
// pipeline.Pipeline satisfies it).
type TextWalker interface {
	TextWalk(ctx context.Context, query string, o pipeline.Options) (*pipeline.Result, error)
}

// Config is what a run searches with.
type Config struct {
	Pipeline Retriever
	Index    retrieval.Index
	Encoder  scoring.Encoder
	KMax     int
	Reader   *Reader // nil: no generator, no EM/F1
	ReaderK  int     // documents the reader sees (default 5)
	// ReaderChars clips each document the reader sees to its first N
	// characters (0: whole documents); claims only.
	ReaderChars int
	// EvidenceTokens is the reader's evidence budget, as POST /v1/answer's
	// evidence_tokens (0: the documents' heads, SourceChars each).
	EvidenceTokens int
	// GraphTrust decides the graph answers of DMAR's systems (graph_em,
	// graph_f1, and with a reader em_graph and f1_graph: the graph's answer
	// where trusted, the reader's elsewhere).
	GraphTrust answer.GraphTrust
	Progress   io.Writer
}

// Record is one question answered by one system: the line of per_question.jsonl.
type Record struct {
	ID                string             `json:"id"`
	System            string             `json:"system"`
	Question          string             `json:"question"`
	RankedIDs         []string           `json:"ranked_ids"`
	Scores            []float64          `json:"scores"`
	Gold              []string           `json:"gold"`
	Answers           []string           `json:"answers,omitempty"`
	Strata            map[string]string  `json:"strata,omitempty"`
	Metrics           map[string]float64 `json:"metrics"`
	LatencyMS         float64            `json:"latency_ms"`
	TimingsMS         map[string]float64 `json:"timings_ms,omitempty"`
	Anchors           []string           `json:"anchors,omitempty"`
	AnchorTitles      []string           `json:"anchor_titles,omitempty"`
	QueryEntities     []string           `json:"query_entities,omitempty"`
	ReformulatedQuery string             `json:"reformulated_query,omitempty"`
	Reformulator      string             `json:"reformulator,omitempty"`
	Fallbacks         []string           `json:"fallbacks,omitempty"`
	// Stages says where each result came from (DMAR: first/second) and
	// whether it was an anchor, to study failures.
	ResultStages []string `json:"result_stages,omitempty"`
	// EntStd is the spread (population std) of the raw structural score
	// over each stage's candidates (first, second); DMAR only.
	EntStd     map[string]float64 `json:"ent_std,omitempty"`
	Prediction string             `json:"prediction,omitempty"` // the reader's answer, or a claim's verdict
	// Evidence are the sentences a claim's verdict cites, as "doc:sentence index".
	Evidence []string `json:"evidence,omitempty"`
	// ReaderCost is what the reader cost on this question (absent without one).
	ReaderCost *ReaderCost `json:"reader_cost,omitempty"`
	// Graph is what the knowledge graph answers (DMAR's systems, when the
	// path that put the top document first ends at its entity).
	Graph *GraphRecord `json:"graph,omitempty"`
	// Candidates are the ids each stage proposed ("recall": the first
	// search's pool; "kg", "text": the graph channels' candidates), for the
	// miss analysis (misses.go, misses.jsonl); not written per question.
	Candidates map[string][]string `json:"-"`
	Error      string              `json:"error,omitempty"`
}

// GraphRecord is a graph answer as a run saw it.
type GraphRecord struct {
	Label      string  `json:"label"`
	Doc        string  `json:"doc"`
	Path       string  `json:"path"`
	Relevance  float64 `json:"relevance"`
	Confidence float64 `json:"confidence"`
	Agree      float64 `json:"agree"`
	Trusted    bool    `json:"trusted"`
}

// Run answers every question with every system, in the same order on the
// same index. A system that fails on a question gets an empty ranking for
// it, and the error is recorded; a cancelled context stops the run.
func Run(ctx context.Context, cfg Config, ds *Dataset, systems []System) ([]Record, error) {
	if cfg.KMax <= 0 {
		cfg.KMax = 20
	}
	if cfg.ReaderK <= 0 {
		cfg.ReaderK = 5
	}
	m := progress.New(cfg.Progress, "eval", "questions", len(ds.Questions))
	var out []Record
	for _, q := range ds.Questions {
		var qvec []float32
		var encodeMS float64
		for _, s := range systems {
			if err := ctx.Err(); err != nil {
				return out, err
			}
			rec := Record{ID: q.ID, System: s.Name, Question: q.Question, Gold: q.Gold, Answers: q.Answers, Strata: q.Strata, RankedIDs: []string{}, Scores: []float64{}}
			var docs []answer.Source
			var graph *answer.GraphAnswer
			var err error
			switch s.Kind {
			case "dmar", "kg-walk", "ppr":
				docs, graph, err = runDMAR(ctx, cfg, q, s, &rec)
			default:
				if qvec == nil && s.Kind != "bm25" {
					t := time.Now()
					v, e := cfg.Encoder.Encode(ctx, []string{q.Question})
					if e != nil {
						err = fmt.Errorf("encode question: %w", e)
						break
					}
					qvec, encodeMS = v[0], msSince(t)
				}
				docs, err = runSearch(ctx, cfg, q, s, qvec, &rec)
				if s.Kind != "bm25" {
					rec.LatencyMS += encodeMS
				}
			}
			if err != nil {
				if ctx.Err() != nil {
					return out, ctx.Err()
				}
				rec.Error = err.Error()
				rec.RankedIDs, rec.Scores, docs = []string{}, []float64{}, nil
			}
			texts := make([]string, len(docs))
			for i, d := range docs {
				texts[i] = docText(d.Title, d.Text)
			}
			rec.Metrics = Score(rec.RankedIDs, texts, q, cfg.KMax)
			graphMetrics(q, graph, &rec)
			if cfg.Reader != nil && rec.Error == "" {
				before, t := cfg.Reader.Stats(), time.Now()
				readerMetrics(ctx, cfg, q, docs, &rec)
				rec.ReaderCost = costSince(before, cfg.Reader.Stats(), t)
				addGraphAnswers(&rec)
			}
			out = append(out, rec)
		}
		m.Add(1)
	}
	m.Done()
	return out, nil
}

func msSince(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1000 }

func runSearch(ctx context.Context, cfg Config, q Question, s System, qvec []float32, rec *Record) ([]answer.Source, error) {
	sq := retrieval.Query{Mode: retrieval.BM25, Text: q.Question, Limit: cfg.KMax, Filter: retrieval.Filter{IDs: q.Pool}}
	switch s.Kind {
	case "dense":
		sq.Mode, sq.Text, sq.Vector = retrieval.Vector, "", qvec
	case "hybrid":
		sq.Mode, sq.Vector, sq.Alpha, sq.Fusion = retrieval.Hybrid, qvec, s.Alpha, retrieval.RelativeScore
	}
	t := time.Now()
	hits, err := cfg.Index.Search(ctx, sq)
	rec.LatencyMS = msSince(t)
	if err != nil {
		return nil, fmt.Errorf("%s search: %w", s.Kind, err)
	}
	docs := make([]answer.Source, len(hits))
	for i, h := range hits {
		rec.RankedIDs = append(rec.RankedIDs, h.Doc.ID)
		rec.Scores = append(rec.Scores, h.Score)
		docs[i] = answer.Source{ID: h.Doc.ID, Title: h.Doc.Title, Text: h.Doc.Text}
	}
	return docs, nil
}

// pooled is o searched within a question's own pool (hotpotqa-distractor),
// if it has one: only the pool's documents, and no more stage-1
// candidates than it holds (but at least m, the anchors).
func pooled(o pipeline.Options, pool []string) pipeline.Options {
	if len(pool) > 0 {
		o.Filter = retrieval.Filter{IDs: pool}
		o.N = min(o.N, max(len(pool), o.M))
	}
	return o
}

func docText(title, text string) string {
	if title == "" {
		return text
	}
	return title + "\n" + text
}

// PriorComposer composes the pipeline with the learned relation prior
// (pipeline.Pipeline satisfies it): the -pX variants run on that
// composition.
type PriorComposer interface {
	WithPathPrior(w float64) (*pipeline.Pipeline, error)
}

func runDMAR(ctx context.Context, cfg Config, q Question, s System, rec *Record) ([]answer.Source, *answer.GraphAnswer, error) {
	o := pooled(*s.Options, q.Pool)
	if s.PathPrior != 0 {
		c, ok := cfg.Pipeline.(PriorComposer)
		if !ok {
			return nil, nil, fmt.Errorf("%s: the retriever cannot be composed with a relation prior", s.Name)
		}
		p, err := c.WithPathPrior(s.PathPrior)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", s.Name, err)
		}
		cfg.Pipeline = p
	}
	t := time.Now()
	var res *pipeline.Result
	var err error
	switch s.Kind {
	case "kg-walk":
		w, ok := cfg.Pipeline.(GraphWalker)
		if !ok {
			return nil, nil, fmt.Errorf("kg-walk: the retriever has no graph channel")
		}
		res, err = w.GraphWalk(ctx, q.Question, o)
	case "ppr":
		w, ok := cfg.Pipeline.(TextWalker)
		if !ok {
			return nil, nil, fmt.Errorf("ppr: the retriever has no text graph")
		}
		res, err = w.TextWalk(ctx, q.Question, o)
	default:
		res, err = cfg.Pipeline.Retrieve(ctx, q.Question, o)
	}
	rec.LatencyMS = msSince(t)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", s.Kind, err)
	}
	docs := answer.SourcesOf(res)
	for _, d := range res.Results {
		rec.RankedIDs = append(rec.RankedIDs, d.ID)
		rec.Scores = append(rec.Scores, d.Score)
		st := d.Breakdown.Stage
		if d.Breakdown.Anchor {
			st += "+anchor"
		} else if d.Breakdown.InFirst {
			st += "+first"
		}
		if d.Breakdown.Source != "" && d.Breakdown.Source != st {
			st += "+" + d.Breakdown.Source
		}
		rec.ResultStages = append(rec.ResultStages, st)
	}
	for _, a := range res.Anchors {
		rec.Anchors = append(rec.Anchors, a.ID)
		rec.AnchorTitles = append(rec.AnchorTitles, a.Title)
	}
	for _, e := range res.QueryEntities {
		rec.QueryEntities = append(rec.QueryEntities, e.QID+" "+strconv.Quote(e.Surface))
	}
	for _, f := range res.Fallbacks {
		rec.Fallbacks = append(rec.Fallbacks, f.Name)
	}
	rec.ReformulatedQuery, rec.Reformulator = res.ReformulatedQuery, res.Reformulator
	rec.TimingsMS = res.TimingsMS
	rec.EntStd = res.EntStd
	rec.Candidates = res.Candidates
	return docs, answer.GraphOf(res, cfg.GraphTrust), nil
}

// Score computes the retrieval metrics of one ranking. Answer recall is
// absent when the question has no usable answer string.
func Score(ranked, texts []string, q Question, kmax int) map[string]float64 {
	m := map[string]float64{}
	for _, k := range cutoffs(kmax) {
		ks := strconv.Itoa(k)
		if len(q.Gold) > 0 {
			m["recall@"+ks] = RecallAt(ranked, q.Gold, k)
			m["hit@"+ks] = HitAt(ranked, q.Gold, k)
			m["all_support@"+ks] = AllAt(ranked, q.Gold, k)
		}
		if v, ok := AnswerRecallAt(texts, answerStrings(q.Answers...), k); ok {
			m["answer_recall@"+ks] = v
		}
	}
	if len(q.Gold) > 0 {
		m["mrr"] = MRR(ranked, q.Gold)
		m["ndcg@10"] = NDCGAt(ranked, q.Gold, 10)
	}
	return m
}

// cutoffs are Ks up to kmax, and kmax itself.
func cutoffs(kmax int) []int {
	var out []int
	for _, k := range Ks {
		if k <= kmax {
			out = append(out, k)
		}
	}
	if len(out) == 0 || out[len(out)-1] != kmax {
		out = append(out, kmax)
	}
	return out
}
