package bench

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/dmar-kg/dmar/internal/corpus"
	"github.com/dmar-kg/dmar/internal/errs"
)

// FailoverFlags are dmar bench failover's flags.
type FailoverFlags struct {
	Readers, Writers        int
	Settle, Outage, CatchUp time.Duration
	Questions               string
	Kills                   int
}

// Register adds the flags to fs.
func (f *FailoverFlags) Register(fs *flag.FlagSet) {
	fs.IntVar(&f.Readers, "readers", 2, "clients sending retrieve requests back to back")
	fs.IntVar(&f.Writers, "writers", 1, "clients writing one document at a time back to back (as PUT /v1/documents)")
	fs.DurationVar(&f.Settle, "settle", 5*time.Second, "load before the first kill and after each node is back")
	fs.DurationVar(&f.Outage, "outage", 10*time.Second, "how long a killed node stays down")
	fs.DurationVar(&f.CatchUp, "catch-up", 60*time.Second, "how long to wait for a restarted node to hold every object before going on")
	fs.IntVar(&f.Kills, "kills", 2, "nodes to kill in turn: first the one the index names first, then the next")
	fs.StringVar(&f.Questions, "questions", "", "JSONL file with a question field per line; empty: the corpus's titles")
}

// Check refuses flags that cannot make a run.
func (f FailoverFlags) Check(nodes int) error {
	switch {
	case f.Readers < 1 || f.Writers < 0:
		return errs.E(errs.Invalid, "bench failover: --readers must be 1 or more and --writers 0 or more")
	case f.Outage <= 0 || f.Settle < 0 || f.CatchUp < 0:
		return errs.E(errs.Invalid, "bench failover: --outage must be positive, --settle and --catch-up not negative")
	case f.Kills < 1 || f.Kills > nodes:
		return errs.E(errs.Invalid, "bench failover: --kills must be between 1 and the %d nodes of the index", nodes)
	}
	return nil
}

// KillOrder is the nodes to kill: the first, then the next ones.
func (f FailoverFlags) KillOrder() []int {
	out := make([]int, f.Kills)
	for i := range out {
		out[i] = i
	}
	return out
}

// Inputs are the queries (the --questions file's, else the corpus's
// titles) and the texts writes are made of (the corpus's).
func (f FailoverFlags) Inputs(ctx context.Context, corpusFiles []string) (queries []string, texts []Text, err error) {
	docs, _, err := corpus.ReadFiles(ctx, corpusFiles)
	if err != nil {
		return nil, nil, err
	}
	if len(docs) == 0 {
		return nil, nil, fmt.Errorf("bench failover: the corpus %v is empty", corpusFiles)
	}
	for _, d := range docs {
		texts = append(texts, Text{Title: d.Title, Text: d.Text})
		if f.Questions == "" {
			queries = append(queries, d.Title)
		}
	}
	if f.Questions != "" {
		if queries, err = ReadQuestions(f.Questions, 0); err != nil {
			return nil, nil, err
		}
	}
	return queries, texts, nil
}
