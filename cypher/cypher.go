// Package cypher holds every Cypher statement dmar runs on Neo4j, as files
// embedded at build time: queries (NAME.cypher, looked up by name) and schema
// migrations (migrations/NNN_name.cypher, applied in order and recorded once).
// Statements take parameters only; none is ever built from strings.
package cypher

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

//go:embed *.cypher migrations/*.cypher
var files embed.FS

// Names of the queries the Neo4j backend runs.
const (
	Ping              = "ping"
	MigrationsApplied = "migrations_applied"
	MigrationRecord   = "migration_record"
	Entities          = "entities"
	LinkCandidates    = "link_candidates"
	Subgraphs         = "subgraphs"
	BrowseSubgraphs   = "browse_subgraphs"
	DrawPaths         = "draw_paths"
	MergeEntities     = "merge_entities"
	MergeTriples      = "merge_triples"
	EntitiesNoNames   = "entities_without_names"
	SetNames          = "set_names"
	PutDocuments      = "put_documents"
	RecordRetrieval   = "record_retrieval"
	Counts            = "counts"
	DeleteGraph       = "delete_graph"
	LinkContext       = "link_context"
	CountNameTokens   = "count_name_tokens"
	DropStaleTokens   = "drop_stale_name_tokens"
	ReplaceDocuments  = "replace_documents"
	DeleteDocuments   = "delete_documents"
	// the mention index (internal/mentions)
	ReplaceMentions  = "replace_mentions"
	Mentioning       = "mentioning"
	DocumentMentions = "document_mentions"
	// the text graph (internal/textgraph)
	PutTextNodes      = "put_text_nodes"
	PutTextEdges      = "put_text_edges"
	DeleteTextGraph   = "delete_text_graph"
	TextMatch         = "text_match"
	TextNeighbourhood = "text_neighbourhood"
	// the text graph's live writes
	TextKnown      = "text_known"
	TextParts      = "text_parts"
	TextMergeNodes = "text_merge_nodes"
	TextAddPairs   = "text_add_pairs"
	TextSetParts   = "text_set_parts"
	TextJoin       = "text_join"
	TextWordNodes  = "text_word_nodes"
)

// Names lists every query the backend needs; Load fails if one is missing.
var Names = []string{Ping, MigrationsApplied, MigrationRecord, Entities, LinkCandidates, Subgraphs,
	BrowseSubgraphs, MergeEntities, MergeTriples, EntitiesNoNames, SetNames, PutDocuments, RecordRetrieval, Counts, DeleteGraph,
	LinkContext, CountNameTokens, DropStaleTokens, ReplaceDocuments, DeleteDocuments, DrawPaths,
	ReplaceMentions, Mentioning, DocumentMentions,
	PutTextNodes, PutTextEdges, DeleteTextGraph, TextMatch, TextNeighbourhood,
	TextKnown, TextParts, TextMergeNodes, TextAddPairs, TextSetParts, TextJoin, TextWordNodes}

// Set is a loaded set of queries, by name.
type Set map[string]string

// Get returns the named statement; it panics on a name Load did not check,
// which is a programming error.
func (s Set) Get(name string) string {
	q, ok := s[name]
	if !ok {
		panic("cypher: query " + name + " was not loaded")
	}
	return q
}

// Migration is one numbered schema change.
type Migration struct {
	N         int
	Name      string // the file name without number and extension
	Statement string
}

// Load returns the queries named in Names and the migrations in order. It
// fails if a named query is missing or empty, or the migrations are not
// numbered 1, 2, 3, ... without gaps or repeats.
func Load() (Set, []Migration, error) {
	return load(files, Names)
}

var migrationRe = regexp.MustCompile(`^(\d{3})_([a-z0-9_]+)\.cypher$`)

func load(fsys fs.FS, names []string) (Set, []Migration, error) {
	s := Set{}
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n+".cypher")
		if err != nil {
			return nil, nil, fmt.Errorf("cypher: query %q: %w", n, err)
		}
		if strings.TrimSpace(string(b)) == "" {
			return nil, nil, fmt.Errorf("cypher: query %q is empty", n)
		}
		s[n] = string(b)
	}
	entries, err := fs.ReadDir(fsys, "migrations")
	if err != nil {
		return nil, nil, fmt.Errorf("cypher: migrations: %w", err)
	}
	var ms []Migration
	for _, e := range entries {
		m := migrationRe.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, nil, fmt.Errorf("cypher: migration file %q is not named NNN_name.cypher", e.Name())
		}
		n, _ := strconv.Atoi(m[1])
		b, err := fs.ReadFile(fsys, path.Join("migrations", e.Name()))
		if err != nil {
			return nil, nil, fmt.Errorf("cypher: migration %s: %w", e.Name(), err)
		}
		ms = append(ms, Migration{N: n, Name: m[2], Statement: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].N < ms[j].N })
	for i, m := range ms {
		if m.N != i+1 {
			return nil, nil, fmt.Errorf("cypher: migrations must be numbered 1, 2, 3, ...: found %03d_%s at position %d", m.N, m.Name, i+1)
		}
	}
	return s, ms, nil
}
