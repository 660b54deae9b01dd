package eval

import (
	"flag"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/pipeline"
)

// RankerFlags are dmar gate ranker's flags beside GateFlags'.
type RankerFlags struct {
	stages string
	// Options are the -o name=value options, read as a request's on top
	// of Pool's (the caller decodes them as the API does).
	Options []string
}

// Register adds f's flags to fs.
func (f *RankerFlags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.stages, "stages", "dmar", "the options the pool is found with: dmar (the method's) or all (dmar-full: the paper's stages on too)")
	fs.Func("o", "a retrieval option as name=value on top of --stages', repeatable (names as in the API)", func(s string) error {
		f.Options = append(f.Options, s)
		return nil
	})
}

// Pool are the options the ranker's pool is found with: the question-aware
// ones of defaults (dmar eval's dmar), with the paper's stages on for
// --stages all (dmar-full's). A bad --stages is an errs.Invalid error.
func (f RankerFlags) Pool(defaults pipeline.Options) (pipeline.Options, error) {
	o := defaults.QuestionAware()
	switch f.stages {
	case "dmar":
	case "all":
		o = o.WithPaperStages()
	default:
		return o, errs.E(errs.Invalid, "--stages must be dmar or all, got %q", f.stages)
	}
	return o, nil
}

// GraphFlags are dmar graph features' flags beside GateFlags'.
type GraphFlags struct {
	Hops    int
	linking string
}

// Register adds f's flags to fs.
func (f *GraphFlags) Register(fs *flag.FlagSet) {
	fs.IntVar(&f.Hops, "hops", 2, "hops walked from the linked entities (1 or 2)")
	fs.StringVar(&f.linking, "linking", "context", "entity linking: exact or context")
}

// Options are defaults with --linking; a bad one is an errs.Invalid error.
func (f GraphFlags) Options(defaults pipeline.Options) (pipeline.Options, error) {
	defaults.Linking = f.linking
	return defaults, defaults.Validate()
}
