package eval

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/dmar-kg/dmar/internal/retrieval"
)

// MissingGold counts the gold ids of ds that x does not hold, and returns them.
func MissingGold(ctx context.Context, x retrieval.Index, ds *Dataset) (int, map[string]bool, error) {
	seen := map[string]bool{}
	var ids []string
	for _, q := range ds.Questions {
		for _, g := range q.Gold {
			if !seen[g] {
				seen[g] = true
				ids = append(ids, g)
			}
		}
	}
	docs, err := x.Documents(ctx, ids)
	if err != nil {
		return 0, nil, fmt.Errorf("eval: look up gold documents: %w", err)
	}
	absent := map[string]bool{}
	for _, id := range ids {
		absent[id] = true
	}
	for _, d := range docs {
		delete(absent, d.ID)
	}
	return len(absent), absent, nil
}

// DropMissingGold keeps the questions of ds whose gold documents are all
// present (not in absent), notes the drop in ds.Notes and returns how many
// questions were dropped.
func DropMissingGold(ds *Dataset, absent map[string]bool) int {
	kept := ds.Questions[:0]
	for _, q := range ds.Questions {
		ok := true
		for _, g := range q.Gold {
			ok = ok && !absent[g]
		}
		if ok {
			kept = append(kept, q)
		}
	}
	dropped := len(ds.Questions) - len(kept)
	ds.Questions = kept
	ds.Notes = append(ds.Notes, fmt.Sprintf("--skip-missing-gold: %d questions were dropped because some gold document is not in the index; %d remain.", dropped, len(kept)))
	return dropped
}

// WriteCorpus writes a benchmark's documents as corpus JSONL under the
// state folder, named by content so that an unchanged corpus is reused, and
// returns its path: a benchmark's own paragraphs go through the same load
// path as any corpus.
func WriteCorpus(state string, ds *Dataset) (string, error) {
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, d := range ds.Corpus {
		if err := enc.Encode(map[string]string{"id": d.ID, "title": d.Title, "text": d.Text}); err != nil {
			return "", fmt.Errorf("eval corpus: %w", err)
		}
	}
	w.Flush()
	h := sha256.Sum256(buf.Bytes())
	name := strings.SplitN(ds.Format, "-", 2)[0]
	p := filepath.Join(state, "eval-corpus", name+"-"+hex.EncodeToString(h[:8])+".jsonl")
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", fmt.Errorf("eval corpus: %w", err)
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return "", fmt.Errorf("eval corpus: %w", err)
	}
	return p, os.Rename(tmp, p)
}

// CheckGold looks up the gold documents of ds in x. With skip, questions
// with a gold document not in x are dropped (an error when none remain);
// else a warning names how many gold ids are missing. It returns the number
// of gold ids still missing from the evaluated questions, for the report.
func CheckGold(ctx context.Context, x retrieval.Index, ds *Dataset, skip bool, stderr io.Writer) (int, error) {
	missing, absent, err := MissingGold(ctx, x, ds)
	if err != nil {
		return 0, err
	}
	if missing > 0 && skip {
		dropped := DropMissingGold(ds, absent)
		fmt.Fprintf(stderr, "eval: dropped %d questions whose gold documents are not in the index; %d remain\n", dropped, len(ds.Questions))
		if len(ds.Questions) == 0 {
			return 0, fmt.Errorf("eval: no question has all its gold documents in the index")
		}
		return 0, nil
	} else if missing > 0 {
		fmt.Fprintf(stderr, "eval: warning: %d gold document ids are not in the index (--skip-missing-gold drops their questions)\n", missing)
	}
	return missing, nil
}
