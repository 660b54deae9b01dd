package main

import (
	"context"
	"io"
	"os"

	"github.com/dmar-kg/dmar/internal/config"
	svc "github.com/dmar-kg/dmar/internal/service"
)

func init() {
	register("serve", "serve DMAR retrieval over REST (embedded graph and index over the demo data by default)", runServe)
	register("mcp", "serve dmar's tools to an agent over the Model Context Protocol on stdin/stdout (serve's data and backend settings; DMAR_API_KEY is the caller's key)", runMCP)
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	s, err := serviceFor("serve", args, stderr)
	if err != nil {
		return err
	}
	return s.HTTP(ctx, stdout)
}

// runMCP serves one MCP client over stdio with DMAR_API_KEY as the caller's
// key. Logs go to stderr; stdout is the protocol's.
func runMCP(ctx context.Context, args []string, _, stderr io.Writer) error {
	s, err := serviceFor("mcp", args, stderr)
	if err != nil {
		return err
	}
	s.Config.Quiet = true // progress lines would not reach the agent; logs do
	return s.Stdio(ctx, config.ClientAPIKey(os.Getenv))
}

// serviceFor parses the flags of dmar serve and dmar mcp.
func serviceFor(name string, args []string, stderr io.Writer) (svc.Service, error) {
	a := appFlags{serve: true}
	if _, err := a.parseArgs(name, args, stderr); err != nil {
		return svc.Service{}, err
	}
	return svc.Service{Config: a.cfg, Log: newLogger(stderr, a.cfg.Server.LogLevel), Progress: stderr, Version: version}, nil
}
