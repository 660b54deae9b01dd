package docbench

import (
	"flag"
	"time"
)

// Flags are dmar bench docs' own flags.
type Flags struct {
	Docs, Batch, Changed int
	SearchTime           time.Duration
	Restart, CPUProfile  string
	IndexOnly            bool
}

// Register adds f's flags to fs.
func (f *Flags) Register(fs *flag.FlagSet) {
	fs.IntVar(&f.Docs, "docs", 128, "documents of the corpus to write for the throughput part")
	fs.IntVar(&f.Batch, "batch", 64, "documents per PUT")
	fs.DurationVar(&f.SearchTime, "search-time", 10*time.Second, "how long each search p50 is measured")
	fs.StringVar(&f.Restart, "restart", "", "data folder whose restart is timed after --changed documents change (e.g. ../shared/data/codexm); empty: skip")
	fs.IntVar(&f.Changed, "changed", 10, "documents changed before the timed restart")
	fs.BoolVar(&f.IndexOnly, "index-only", false, "measure only searches alone and under the index-only writers (the index sharing with the parent generation all, its prepared parts only, nothing), skipping the throughput, the store writers and the restart")
	fs.StringVar(&f.CPUProfile, "cpuprofile", "", "path prefix: write the CPU profile of each slice of the search measure to PREFIX-phaseK-roundR.pprof")
}
