package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
)

func init() {
	register("load kg", "load a KG bundle (triples.tsv, entities.jsonl, relations.json) into the graph backend", runLoadKG)
	register("load corpus", "link and embed a JSONL corpus and load it into the search backend", runLoadCorpus)
}

func runLoadKG(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var a appFlags
	fs := flag.NewFlagSet("load kg", flag.ContinueOnError)
	fs.SetOutput(stderr)
	a.register(fs)
	if err := fs.Parse(args); err != nil {
		return flagErr(err)
	}
	g, _, err := a.openGraph(ctx, stdout)
	if err != nil {
		return err
	}
	if s, ok := g.graph.(interface{ Stats() (int, int, int) }); ok {
		e, t, r := s.Stats()
		fmt.Fprintf(stdout, "graph ready: %d entities, %d triples, %d relations (state %s)\n", e, t, r, a.state)
	}
	return nil
}

func runLoadCorpus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var a appFlags
	fs := flag.NewFlagSet("load corpus", flag.ContinueOnError)
	fs.SetOutput(stderr)
	a.register(fs)
	if err := fs.Parse(args); err != nil {
		return flagErr(err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	m, err := a.openModels(log)
	if err != nil {
		return err
	}
	defer m.Close()
	g, _, err := a.openGraph(ctx, stderr)
	if err != nil {
		return err
	}
	x, _, err := a.openIndex(ctx, g, m.enc, stdout)
	if err != nil {
		return err
	}
	if w, ok := x.(interface {
		Count(context.Context) (int, error)
	}); ok {
		n, err := w.Count(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "index ready: %d documents (state %s)\n", n, a.state)
	}
	return nil
}
