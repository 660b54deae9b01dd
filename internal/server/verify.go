package server

import (
	"context"
	"io"

	"github.com/gin-gonic/gin"

	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/verify"
)

// VerifyInput is a decoded POST /v1/verify body: the claim and the
// retrieval's options. Its JSON fields are api.VerifyRequest's.
type VerifyInput struct {
	Claim string `json:"claim"`
	pipeline.Options
}

// DecodeVerify reads a verify request as strictly as DecodeRetrieve; the
// claim follows a query's rule (checkText).
func DecodeVerify(r io.Reader, defaults pipeline.Options) (VerifyInput, error) {
	req := VerifyInput{Options: defaults}
	if err := decodeWithMethod(r, &req, &req.Options); err != nil {
		return req, pipeline.RemovedOption(err)
	}
	return req, checkText("claim", req.Claim)
}

// VerifyClaim retrieves for req's claim with p, then has v give a verdict
// from the top results (model names its model in the response). dmar verify
// runs it locally; POST /v1/verify runs it for every request.
func VerifyClaim(ctx context.Context, p *pipeline.Pipeline, v *verify.Verifier, model string, req VerifyInput) (*api.VerifyResponse, error) {
	res, clk, err := retrieveFirst(ctx, p, v.Check, req.Claim, req.Options)
	if err != nil {
		return nil, err
	}
	docs := make([]verify.Source, len(res.Results))
	for i, d := range res.Results {
		docs[i] = verify.Source{ID: d.ID, Title: d.Title, Text: d.Text}
	}
	out, err := v.Verify(ctx, req.Claim, docs)
	if err != nil {
		return nil, err
	}
	return ToVerifyResponse(req.Claim, out, model, ToRetrieveResponse(res), clk.timings()), nil
}

// ToVerifyResponse converts a verification's result.
func ToVerifyResponse(claim string, r verify.Result, model string, ret *api.RetrieveResponse, timings map[string]float64) *api.VerifyResponse {
	ev := make([]api.Evidence, len(r.Evidence))
	for i, s := range r.Evidence {
		ev[i] = api.Evidence{ID: s.Doc, Title: s.Title, Sentence: s.Index, Text: s.Text, Number: s.Number}
	}
	return &api.VerifyResponse{Claim: claim, Verdict: string(r.Verdict), Evidence: ev, ModelVerdict: string(r.ModelVerdict), Note: r.Note,
		DroppedEvidence: r.Dropped, Sources: nonNil(r.Sources), SentencesShown: len(r.Shown), Model: model, TimingsMS: timings, Retrieval: ret}
}

// verifyClaim serves POST /v1/verify. No generator, or one that is down, is
// a 503; the request's time limit bounds the whole.
func (s *Server) verifyClaim(c *gin.Context) {
	req, ok := decodeGenerated(s, c, s.cfg.Verifier.Check, DecodeVerify)
	if !ok {
		return
	}
	p := s.cfg.Pipeline
	out, err := VerifyClaim(c.Request.Context(), p, s.cfg.Verifier, s.cfg.AnswerModel, req)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.reply(c, out, retrieveSizers(req.Options, p.Defaults()))
}
