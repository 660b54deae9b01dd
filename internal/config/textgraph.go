package config

import (
	"strings"
)

// TextGraph configures the graph built from the corpus's text
// (internal/textgraph): the extractor that finds each passage's phrases at
// load, and the Python interpreter that runs spaCy for the spacy extractor.
type TextGraph struct {
	// Extractor is "" (no text graph: the text_graph option answers
	// text_graph_unavailable), heuristic (Go, no install), spacy
	// (en_core_web_sm, installed by make setup) or openie:FILE (a peer's
	// extraction, HippoRAG's format: for measuring only).
	Extractor string `yaml:"extractor"`
	Python    string `yaml:"python"`
}

// TextGraphExtractors are the extractors the setting takes besides
// openie:FILE.
var TextGraphExtractors = []string{"heuristic", "spacy"}

// DefaultTextGraphPython is where scripts/setup/50-spacy.sh puts the
// interpreter of spaCy's environment.
func DefaultTextGraphPython(cache string) string {
	return cache + "/spacy/bin/python"
}

func (t *TextGraph) validate(ps *Problems) {
	switch e := t.Extractor; {
	case e == "" || e == "heuristic" || e == "spacy":
	case strings.HasPrefix(e, "openie:") && len(e) > len("openie:"):
	default:
		ps.add("textgraph.extractor", "%q: want empty (no text graph), %s or openie:FILE", e, strings.Join(TextGraphExtractors, ", "))
	}
	if t.Extractor == "spacy" && t.Python == "" {
		ps.add("textgraph.python", "the spacy extractor needs the interpreter of spaCy's environment (make setup installs it)")
	}
}
