package main

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/dmar-kg/dmar/internal/scoring/onnx"
)

// openStructuralModels opens the Siamese GNN and the gate. The committed
// models are found from the repository root (or DMAR_GNN_MODEL / DMAR_GATE_MODEL); an explicit
// path that does not exist is an error, and an empty one turns the model off
// (the pipeline then uses the GED heuristic or fixed weights and says so in
// every response's fallbacks).
func (a *appFlags) openStructuralModels(rt *onnx.Runtime, m *models, log *slog.Logger) error {
	if path := a.gnnPath; path != "" {
		if path == onnx.GNNModelFile {
			path = onnx.DefaultGNNPath()
		}
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("gnn model: %w (set --gnn, or --gnn '' for the GED heuristic)", err)
		}
		g, err := onnx.NewGraphEncoder(rt, path)
		if err != nil {
			return err
		}
		m.gnn = g
		m.closers = append(m.closers, g.Close)
		log.Info("gnn loaded", "path", path, "version", g.Version())
	}
	if path := a.gatePath; path != "" {
		def := path == onnx.GateModelFile
		if def {
			path = onnx.DefaultGatePath()
		}
		if _, err := os.Stat(path); err != nil {
			if !def {
				return fmt.Errorf("gate model: %w (set --gate, or --gate '' for fixed weights)", err)
			}
			log.Warn("gate model not found; fixed weights are used and responses say so", "path", path)
			return nil
		}
		g, err := onnx.NewGate(rt, path)
		if err != nil {
			return err
		}
		m.gate = g
		m.closers = append(m.closers, g.Close)
		log.Info("gate loaded", "path", path, "version", g.Version())
	}
	return nil
}
