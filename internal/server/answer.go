package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/dmar-kg/dmar/internal/answer"
	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/pipeline"
)

// AnswerInput is a decoded POST /v1/answer body: a retrieve request, the
// answer's own options and whether to stream. Its JSON fields are
// api.AnswerRequest's.
type AnswerInput struct {
	RetrieveInput
	Stream bool `json:"stream"`
	// EvidenceTokens is the reader's evidence budget (0: the documents'
	// heads); GraphAnswer lets a trusted graph path answer without a reader.
	EvidenceTokens int  `json:"evidence_tokens"`
	GraphAnswer    bool `json:"graph_answer"`
}

// DecodeAnswer reads an answer request as strictly as DecodeRetrieve.
func DecodeAnswer(r io.Reader, defaults pipeline.Options) (AnswerInput, error) {
	req := AnswerInput{RetrieveInput: RetrieveInput{Options: defaults}, EvidenceTokens: answer.DefaultEvidenceTokens, GraphAnswer: true}
	if err := decodeWithMethod(r, &req, &req.Options); err != nil {
		return req, pipeline.RemovedOption(err)
	}
	if req.EvidenceTokens < 0 || req.EvidenceTokens > answer.MaxEvidenceTokens {
		return req, errs.Field("evidence_tokens", "evidence_tokens must be between 0 (the documents' heads) and %d, not %d", answer.MaxEvidenceTokens, req.EvidenceTokens)
	}
	return req, checkText("query", req.Query)
}

// AnswerQuery retrieves req with p, then has a answer from the top results
// (model names it in the response). With onDelta set, the answer streams
// through it piece by piece, with the retrieval it is written from; an error
// from onDelta stops the answer. dmar ask runs it locally; POST /v1/answer
// runs it for every request.
func AnswerQuery(ctx context.Context, p *pipeline.Pipeline, a *answer.Answerer, model string, req AnswerInput,
	onDelta func(ret *api.RetrieveResponse, piece string) error) (*api.AnswerResponse, error) {
	res, clk, err := retrieveFirst(ctx, p, a.Check, req.Query, req.Options)
	if err != nil {
		return nil, err
	}
	ret := ToRetrieveResponse(res)
	var pieces func(string) error
	if onDelta != nil {
		pieces = func(d string) error { return onDelta(ret, d) }
	}
	opts := answer.Options{EvidenceTokens: req.EvidenceTokens}
	if req.GraphAnswer {
		opts.Graph = answer.GraphOf(res, answer.DefaultGraphTrust)
	}
	ans, err := a.Answer(ctx, req.Query, answer.SourcesOf(res), opts, pieces)
	if err != nil {
		return nil, err
	}
	out := &api.AnswerResponse{Answer: ans.Text, Citations: nonNil(ans.Citations), DroppedCitations: ans.Dropped, Sources: nonNil(ans.Shown),
		Source: ans.Source, Model: model, Retrieval: ret, TimingsMS: clk.timings()}
	if ans.Source == answer.SourceGraph {
		out.Model = ""
		out.GraphPath = ans.Path
	}
	for _, e := range ans.Evidence {
		out.Evidence = append(out.Evidence, api.AnswerEvidence{ID: e.Doc, Sentence: e.Index, Text: e.Text, Fact: e.Fact})
	}
	return out, nil
}

// answer serves POST /v1/answer. No generator, or one that is down, is a 503
// before anything is streamed; the request's time limit bounds the whole.
func (s *Server) answer(c *gin.Context) {
	req, ok := decodeGenerated(s, c, s.cfg.Answerer.Check, DecodeAnswer)
	if !ok {
		return
	}
	p := s.cfg.Pipeline
	if !req.Stream {
		out, err := AnswerQuery(c.Request.Context(), p, s.cfg.Answerer, s.cfg.AnswerModel, req, nil)
		if err != nil {
			s.fail(c, err)
			return
		}
		s.reply(c, out, retrieveSizers(req.Options, p.Defaults()))
		return
	}
	s.streamAnswer(c, req)
}

// streamAnswer writes server-sent events: the retrieval, the answer's pieces
// and the checked answer. The status line waits for the generator's first
// piece, so that a generator that is down still gets a 503.
func (s *Server) streamAnswer(c *gin.Context, req AnswerInput) {
	started := false
	send := func(event string, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(c.Writer, "event: %s\ndata: %s\n\n", event, b); err != nil {
			return errs.Wrap(errs.Unavailable, err, "the client went away")
		}
		c.Writer.Flush()
		return nil
	}
	begin := func(ret *api.RetrieveResponse) error {
		if started {
			return nil
		}
		started = true
		c.Header("Content-Type", "text/event-stream")
		c.Header("Cache-Control", "no-cache")
		c.Header("X-Accel-Buffering", "no") // proxies must not hold the events back
		c.Status(http.StatusOK)
		return send(api.EventRetrieval, ret)
	}
	out, err := AnswerQuery(c.Request.Context(), s.cfg.Pipeline, s.cfg.Answerer, s.cfg.AnswerModel, req, func(ret *api.RetrieveResponse, d string) error {
		if err := begin(ret); err != nil {
			return err
		}
		return send(api.EventDelta, api.AnswerDelta{Text: d})
	})
	if err != nil && !started {
		s.fail(c, err)
		return
	}
	if err != nil {
		e, ok := errs.As(err)
		if !ok {
			e = &errs.Error{Code: errs.Unavailable, Message: "the answer stopped: " + clip(err.Error(), maxMessage), Err: err}
		}
		s.cfg.Logger.Warn("answer stream failed", "request_id", c.GetString("request_id"), "err", clip(err.Error(), maxLoggedErr))
		_ = send(api.EventError, toErrorBody(e))
		return
	}
	if err := begin(out.Retrieval); err != nil {
		return
	}
	out.Retrieval = nil // sent first, in its own event
	_ = send(api.EventAnswer, out)
}

func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// decodeGenerated is how POST /v1/answer and /v1/verify start: a configured
// generator (check), then the body decoded by decode over the pipeline's
// defaults. On an error it answers with it and returns false.
func decodeGenerated[T any](s *Server, c *gin.Context, check func() error, decode func(io.Reader, pipeline.Options) (T, error)) (T, bool) {
	if err := check(); err != nil {
		s.fail(c, err)
		var none T
		return none, false
	}
	req, err := decode(c.Request.Body, s.cfg.Pipeline.Defaults())
	if err != nil {
		s.fail(c, err)
		return req, false
	}
	return req, true
}

// retrieveFirst is how an answer and a verdict start: a configured
// generator (check), then the retrieval for text. Its clock times the
// retrieval and what follows.
func retrieveFirst(ctx context.Context, p *pipeline.Pipeline, check func() error, text string, opts pipeline.Options) (*pipeline.Result, clock, error) {
	if err := check(); err != nil {
		return nil, clock{}, err
	}
	start := time.Now()
	res, err := p.Retrieve(ctx, text, opts)
	return res, clock{start: start, retrieved: time.Now()}, err
}

// clock holds when a request started and when its retrieval ended.
type clock struct{ start, retrieved time.Time }

// timings are the request's times until now, in milliseconds: the
// retrieval, what followed it (the generation) and the whole.
func (c clock) timings() map[string]float64 {
	end := time.Now()
	return map[string]float64{"retrieve": ms(c.retrieved.Sub(c.start)), "generate": ms(end.Sub(c.retrieved)), "total": ms(end.Sub(c.start))}
}
