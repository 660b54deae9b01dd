package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/pipeline"
)

// maxMessage caps an error message (the clips at each echo come first).
const maxMessage = 400

// sizer is an option that sizes a response, with its value and whether the
// request raised it above the server's default.
type sizer struct {
	name   string
	value  int
	raised bool
}

// retrieveSizers are the options a retrieval's response grows with, in the
// order a 422 names them.
func retrieveSizers(o, d pipeline.Options) []sizer {
	return []sizer{
		{"hops", o.Hops, o.Hops > d.Hops}, {"max_nodes", o.MaxNodes, o.MaxNodes > d.MaxNodes},
		{"max_anchor_subgraphs", o.MaxAnchorSubgraphs, o.MaxAnchorSubgraphs > d.MaxAnchorSubgraphs},
		{"k", o.K, o.K > d.K}, {"m", o.M, o.M > d.M}, {"snippet_chars", o.SnippetChars, o.SnippetChars > d.SnippetChars},
	}
}

// subgraphSizers are the subgraph route's.
func subgraphSizers(p, d kg.SubgraphParams) []sizer {
	return []sizer{{"hops", p.Hops, p.Hops > d.Hops}, {"limit", p.MaxNodes, p.MaxNodes > d.MaxNodes}}
}

// reply writes v as the 200 JSON body, unless its encoding is over
// MaxResponseBytes: then nothing of it is sent and the request is refused
// with 422 naming the sizing options above their defaults (the first is the
// error's field) or, when none is, all of them.
func (s *Server) reply(c *gin.Context, v any, sizers []sizer) {
	b, err := json.Marshal(v)
	if err != nil {
		s.fail(c, err)
		return
	}
	if len(b) <= s.cfg.MaxResponseBytes {
		c.Data(http.StatusOK, "application/json; charset=utf-8", b)
		return
	}
	var named []string
	field := ""
	for _, z := range sizers {
		if z.raised {
			named = append(named, fmt.Sprintf("%s=%d", z.name, z.value))
			if field == "" {
				field = z.name
			}
		}
	}
	if len(named) == 0 {
		for _, z := range sizers {
			named = append(named, fmt.Sprintf("%s=%d", z.name, z.value))
		}
	}
	s.fail(c, &errs.Error{Code: errs.Unprocessable, Field: field,
		Message: fmt.Sprintf("the response would be %d bytes, over the server's limit of %d; lower %s", len(b), s.cfg.MaxResponseBytes, strings.Join(named, ", "))})
}
