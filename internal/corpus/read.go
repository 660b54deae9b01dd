// Package corpus is a document collection on its way into an index: Read
// parses the JSONL format of ../shared/data/codexm/corpus.jsonl (one {id,
// title, text} object a line; bad lines are counted, reported and skipped),
// and Prepare links each document to the knowledge graph and embeds it with
// the sentence encoder at load time, so that only queries are linked and
// encoded at request time.
package corpus

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/dmar-kg/dmar/internal/retrieval"
)

// Stats counts a read: Read = Loaded + Bad + Duplicate.
type Stats struct {
	Read, Loaded, Bad, Duplicate int
	Problems                     []string // the first few reasons
}

// ReadFile reads a JSONL corpus file.
func ReadFile(ctx context.Context, path string) ([]retrieval.Document, Stats, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, Stats{}, fmt.Errorf("open corpus: %w", err)
	}
	defer f.Close()
	return Read(ctx, f, path)
}

// ReadFiles reads several JSONL corpus files as one corpus, in order: a
// document whose id an earlier file already holds counts as a duplicate.
func ReadFiles(ctx context.Context, paths []string) ([]retrieval.Document, Stats, error) {
	if len(paths) == 0 {
		return nil, Stats{}, fmt.Errorf("open corpus: no corpus file is configured")
	}
	var all Stats
	var docs []retrieval.Document
	seen := map[string]bool{}
	for _, p := range paths {
		ds, st, err := ReadFile(ctx, p)
		if err != nil {
			return nil, all, err
		}
		all.Read += st.Read
		all.Bad += st.Bad
		all.Duplicate += st.Duplicate
		all.Problems = append(all.Problems, st.Problems...)
		for _, d := range ds {
			if seen[d.ID] {
				all.Duplicate++
				continue
			}
			seen[d.ID] = true
			docs = append(docs, d)
			all.Loaded++
		}
	}
	if len(all.Problems) > 10 {
		all.Problems = all.Problems[:10]
	}
	return docs, all, nil
}

// Read reads JSONL documents from r; name is used in messages.
func Read(ctx context.Context, r io.Reader, name string) ([]retrieval.Document, Stats, error) {
	var st Stats
	var docs []retrieval.Document
	seen := map[string]bool{}
	br := bufio.NewReaderSize(r, 1<<20)
	for n := 1; ; n++ {
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, st, err
			}
		}
		line, rerr := br.ReadBytes('\n')
		if s := strings.TrimSpace(string(line)); s != "" {
			st.Read++
			d, err := parse([]byte(s))
			switch {
			case err != nil:
				st.Bad++
				if len(st.Problems) < 10 {
					st.Problems = append(st.Problems, fmt.Sprintf("%s:%d: %v", name, n, err))
				}
			case seen[d.ID]:
				st.Duplicate++
			default:
				seen[d.ID] = true
				docs = append(docs, d)
				st.Loaded++
			}
		}
		if rerr == io.EOF {
			return docs, st, nil
		}
		if rerr != nil {
			return nil, st, fmt.Errorf("read %s: %w", name, rerr)
		}
	}
}

func parse(b []byte) (retrieval.Document, error) {
	var d struct {
		ID    *string `json:"id"`
		Title string  `json:"title"`
		Text  string  `json:"text"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return retrieval.Document{}, err
	}
	if d.ID == nil || strings.TrimSpace(*d.ID) == "" {
		return retrieval.Document{}, fmt.Errorf("missing id")
	}
	if strings.TrimSpace(d.Title) == "" && strings.TrimSpace(d.Text) == "" {
		return retrieval.Document{}, fmt.Errorf("document %q has neither title nor text", *d.ID)
	}
	return retrieval.Document{ID: strings.TrimSpace(*d.ID), Title: d.Title, Text: d.Text}, nil
}
