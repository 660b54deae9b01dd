package server

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/dmar-kg/dmar/internal/errs"
)

// mcpPath is the Model Context Protocol endpoint (streamable HTTP). It is
// authenticated like every REST route, but an MCP message is not charged
// to the key's rate limit: each tool call is, as the REST request it makes.
const mcpPath = "/mcp"

// mcpRoute serves Config.MCP, built over this server, at POST /mcp.
func (s *Server) mcpRoute(r *gin.Engine, jsonBody gin.HandlerFunc) {
	var h http.Handler
	if s.cfg.MCP != nil {
		h = s.cfg.MCP(s)
	}
	r.POST(mcpPath, jsonBody, func(c *gin.Context) {
		if h == nil {
			s.fail(c, errs.E(errs.NotFound, "this server has no MCP endpoint"))
			return
		}
		h.ServeHTTP(c.Writer, c.Request)
	})
}
