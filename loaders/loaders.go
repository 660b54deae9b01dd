// Package loaders groups the sources that fill a knowledge graph (a Wikidata
// JSON dump, a SPARQL endpoint) and the file formats they write (CSV files
// for neo4j-admin import, a bundle directory for the embedded graph). Every
// loader writes to a kg.Sink; loaders depend on kg, never the reverse.
package loaders

import "strings"

// SplitList splits a comma-separated flag value, dropping blanks.
func SplitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
