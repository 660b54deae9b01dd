package bench

import (
	"flag"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dmar-kg/dmar/internal/datapath"
	"github.com/dmar-kg/dmar/internal/errs"
)

// ScaleFlags are dmar bench scale's flags.
type ScaleFlags struct {
	Sizes      string
	Questions  string
	Requests   int
	Seed       uint64
	Quality    bool
	QualitySys string
	ANNMin     int
	ANNEf      int
	EfSweep    string
	NoEmbedded bool
}

// Register adds the flags to fs.
func (f *ScaleFlags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.Sizes, "sizes", "16000,128000,1000000", "corpus sizes, comma-separated: the --data corpus's documents, then synthetic ones made from them")
	fs.StringVar(&f.Questions, "questions", "", "kgqa JSONL questions for searches and requests (default: the shared data's kgqa/dev.jsonl)")
	fs.IntVar(&f.Requests, "requests", 50, "default requests timed per size and backend (each asked once before, untimed)")
	fs.Uint64Var(&f.Seed, "seed", 1, "seed of the synthetic documents")
	fs.IntVar(&f.ANNMin, "ann-min", 0, "corpus size from which the embedded index searches vectors through its HNSW graph (0: memindex's default, -1: never, the exact scan at every size)")
	fs.IntVar(&f.ANNEf, "ann-ef", 0, "candidates a search of the embedded index's HNSW graph explores (0: memindex's default)")
	fs.StringVar(&f.EfSweep, "ann-ef-sweep", "", "further ef values, comma-separated, at which the HNSW graph's recall@100 and search time are also measured")
	fs.BoolVar(&f.NoEmbedded, "no-embedded", false, "measure only the --index Weaviate, not the embedded index")
	fs.BoolVar(&f.Quality, "quality", false, "also evaluate kgqa Recall@5 of dmar, dense and hybrid on the embedded index at every size (gold documents are real ones)")
	fs.StringVar(&f.QualitySys, "quality-systems", "dmar,dense,hybrid", "with --quality, the dmar eval systems evaluated, comma-separated")
}

// ParseSizes reads --sizes: positive, ascending.
func (f ScaleFlags) ParseSizes() ([]int, error) {
	var out []int
	for _, p := range strings.Split(f.Sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n <= 0 {
			return nil, errs.E(errs.Invalid, "bench scale: --sizes %q: %q is not a positive number", f.Sizes, p)
		}
		if len(out) > 0 && n <= out[len(out)-1] {
			return nil, errs.E(errs.Invalid, "bench scale: --sizes %q must ascend", f.Sizes)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, errs.E(errs.Invalid, "bench scale: --sizes is empty")
	}
	return out, nil
}

// ParseEfSweep reads --ann-ef-sweep: positive numbers.
func (f ScaleFlags) ParseEfSweep() ([]int, error) {
	var out []int
	for _, p := range strings.Split(f.EfSweep, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 {
			return nil, errs.E(errs.Invalid, "bench scale: --ann-ef-sweep %q: %q is not a positive number", f.EfSweep, p)
		}
		out = append(out, n)
	}
	return out, nil
}

// QuestionFile is --questions, else kgqa's dev questions.
func (f ScaleFlags) QuestionFile() (string, error) {
	if f.Questions != "" {
		return f.Questions, nil
	}
	d, err := datapath.Dataset("kgqa")
	if err != nil {
		return "", fmt.Errorf("bench scale: --questions not given and %w", err)
	}
	return filepath.Join(d, "dev.jsonl"), nil
}
