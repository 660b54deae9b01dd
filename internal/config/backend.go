package config

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// The URL schemes of the remote backends: every path (validation, serve,
// eval, query, load) accepts these and refuses the others.
var (
	GraphSchemes = []string{"neo4j", "neo4j+s", "bolt", "bolt+s"}     // the Neo4j driver's
	IndexSchemes = []string{"weaviate", "weaviates", "http", "https"} // weaviate.Open's
)

// Backend is a parsed graph or index setting.
type Backend struct {
	URL    string // the setting as given; empty for the embedded backend
	Scheme string // e.g. bolt, weaviates; empty for the embedded backend
}

// Embedded reports whether b is the in-process backend.
func (b Backend) Embedded() bool { return b.URL == "" }

// ParseGraph parses a graph setting: embedded (or empty), or a Neo4j URL
// with one of GraphSchemes.
func ParseGraph(raw string) (Backend, error) {
	return parseBackend(raw, "neo4j://HOST:PORT", GraphSchemes)
}

// ParseIndex parses an index setting: embedded (or empty), or a Weaviate
// URL with one of IndexSchemes, whose host may be a comma-separated list of
// a cluster's nodes (checked here as its first host; weaviate.ParseURL
// reads the list).
func ParseIndex(raw string) (Backend, error) {
	b, err := parseBackend(firstHost(raw), "weaviate://HOST:PORT/Class", IndexSchemes)
	if err != nil || b.Embedded() {
		return b, err
	}
	b.URL = raw
	return b, nil
}

func parseBackend(raw, example string, schemes []string) (Backend, error) {
	if raw == "embedded" || raw == "" {
		return Backend{}, nil
	}
	if msg := checkURL(raw, schemes...); msg != "" {
		return Backend{}, fmt.Errorf("%q: %s; want embedded or %s", raw, msg, example)
	}
	u, _ := url.Parse(raw)
	return Backend{URL: raw, Scheme: u.Scheme}, nil
}

// GraphBackend is c.Graph parsed; Validate has refused a wrong one.
func (c *Config) GraphBackend() Backend { b, _ := ParseGraph(c.Graph); return b }

// IndexBackend is c.Index parsed; Validate has refused a wrong one.
func (c *Config) IndexBackend() Backend { b, _ := ParseIndex(c.Index); return b }

func checkURL(raw string, schemes ...string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "not a URL"
	}
	ok := false
	for _, s := range schemes {
		ok = ok || u.Scheme == s
	}
	if !ok {
		return fmt.Sprintf("scheme %q is not one of %s", u.Scheme, strings.Join(schemes, ", "))
	}
	if u.Host == "" {
		return "no host"
	}
	if u.User != nil {
		return "credentials in the URL are not accepted; use the secret variables"
	}
	return ""
}

// BundleDir is the KG bundle folder: kg, else data.
func (c *Config) BundleDir() string {
	if c.KG != "" {
		return c.KG
	}
	return c.Data
}

// CorpusFiles are the corpus JSONL files: corpus (one file, or several
// separated by commas, searched as one corpus), else data/corpus.jsonl.
func (c *Config) CorpusFiles() []string {
	var out []string
	for _, f := range strings.Split(c.CorpusFile(), ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return []string{c.CorpusFile()}
	}
	return out
}

// CorpusFile is the corpus setting as given: corpus, else data/corpus.jsonl.
func (c *Config) CorpusFile() string {
	if c.Corpus != "" {
		return c.Corpus
	}
	return filepath.Join(c.Data, "corpus.jsonl")
}
