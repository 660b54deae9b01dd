package bench

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/dmar-kg/dmar/internal/corpus"
	"github.com/dmar-kg/dmar/internal/cpuprofile"
	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/eval"
	"github.com/dmar-kg/dmar/internal/kg"
)

// The benchmarks' own flags, beside the configuration's (cmd/dmar
// registers both and calls these). A wrong flag is an errs.Invalid error.

// LatencyFlags are dmar bench latency's flags.
type LatencyFlags struct {
	Questions  string
	Limit      int
	CPUProfile string
	Cold, Warm bool
}

// Register adds the flags to fs.
func (f *LatencyFlags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.Questions, "questions", "", "JSONL file with a question field per line (e.g. ../shared/data/kgqa/dev.jsonl), or a dmar eval dataset FORMAT:PATH (e.g. musique:../shared/data/musique-100), whose own corpus is then searched as dmar eval searches it")
	fs.IntVar(&f.Limit, "limit", 0, "use only the first N questions")
	fs.StringVar(&f.CPUProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file (go tool pprof)")
	fs.BoolVar(&f.Cold, "cold", true, "time a pass with a cold cache first (subgraphs extracted and encoded as the questions need them)")
	fs.BoolVar(&f.Warm, "warm", true, "then cache every entity's subgraph and GNN embedding, as a long-running server's cache holds them (with --graph neo4j://..., the entities of the --data bundle), and time a second pass")
}

// ReadQuestions reads the --questions file, up to --limit questions. A dmar
// eval dataset (FORMAT:PATH) gives its questions and, where it brings a
// corpus of its own (HotpotQA's, MuSiQue's), the corpus file dmar eval
// searches for it (written once into the state folder), unless corpusPath
// (the configured --corpus) names one: the caller searches the returned corpus.
func (f LatencyFlags) ReadQuestions(state, corpusPath string) ([]string, string, error) {
	if f.Questions == "" {
		return nil, "", errs.E(errs.Invalid, "bench latency: --questions is required")
	}
	if !f.Cold && !f.Warm {
		return nil, "", errs.E(errs.Invalid, "bench latency: --cold=false and --warm=false leave nothing to time")
	}
	if format, _, ok := strings.Cut(f.Questions, ":"); ok && slices.Contains(eval.Formats, format) {
		return datasetQuestions(f.Questions, f.Limit, state, corpusPath)
	}
	qs, err := ReadQuestions(f.Questions, f.Limit)
	return qs, corpusPath, err
}

// datasetQuestions are a dmar eval dataset's questions and the corpus to
// search them in (eval.CorpusFor). Per-question pools and passages added to
// the configured corpus (NQ-open, TriviaQA) are refused: the latency bench
// searches one corpus, unfiltered.
func datasetQuestions(spec string, limit int, state, corpusPath string) ([]string, string, error) {
	ds, err := eval.Open(spec, 0)
	if err != nil {
		return nil, "", errs.E(errs.Invalid, "bench latency: %s", err)
	}
	if ds.Setting == "per-question" || len(ds.ExtraCorpora) > 0 {
		return nil, "", errs.E(errs.Invalid, "bench latency: %s searches per-question pools or adds passages to the corpus; give its questions as a JSONL file and the corpus with --corpus", spec)
	}
	ds.Limit(limit)
	if corpusPath, err = eval.CorpusFor(ds, state, corpusPath); err != nil {
		return nil, "", err
	}
	qs := make([]string, len(ds.Questions))
	for i, q := range ds.Questions {
		qs[i] = q.Question
	}
	return qs, corpusPath, nil
}

// Latency is the benchmark of the flags: the questions on each backend.
func (f LatencyFlags) Latency(questions []string, backends []LatencyBackend) Latency {
	return Latency{Backends: backends, Questions: questions, QuestionsPath: f.Questions, Cold: f.Cold, Warm: f.Warm}
}

// StartProfile starts the --cpuprofile CPU profile, if asked; stop ends it.
func (f LatencyFlags) StartProfile() (stop func(), err error) {
	stop, err = cpuprofile.Start(f.CPUProfile)
	if err != nil {
		return nil, fmt.Errorf("bench latency: %w", err)
	}
	return stop, nil
}

// SubgraphFlags are dmar bench subgraphs' flags.
type SubgraphFlags struct {
	Seeds, Rounds, Hops, MaxNodes, HubDegree int
	Seed, RootsBelow                         uint64
	Channel                                  bool
	Questions                                string
}

// Register adds the flags to fs.
func (f *SubgraphFlags) Register(fs *flag.FlagSet) {
	def := kg.DefaultSubgraphParams()
	fs.IntVar(&f.Seeds, "seeds", 300, "roots per Subgraphs call, drawn from the graph's entities")
	fs.IntVar(&f.Rounds, "rounds", 20, "timed calls per graph (each with a fresh draw), after one warm-up")
	fs.Uint64Var(&f.Seed, "seed", 1, "seed of the draws")
	fs.IntVar(&f.Hops, "hops", def.Hops, "subgraph hops (the graph-recall channel uses 1 and 2)")
	fs.IntVar(&f.MaxNodes, "max-nodes", def.MaxNodes, "node cap per subgraph (the graph-recall channel uses 4000)")
	fs.IntVar(&f.HubDegree, "hub-degree", def.HubDegree, "hub cap")
	fs.Uint64Var(&f.RootsBelow, "roots-below", 0, "draw the roots only among QIDs below Q<N> (1000000000: the real entities of scripts/bench/gengraph's graphs); 0: all")
	fs.BoolVar(&f.Channel, "channel", false, "time the graph channel's call (kg.Neighbourhoods: hub roots as stars, the walked nodes' edges only; the channel's shape is --hops 2 --max-nodes 4000) instead of Subgraphs")
	fs.StringVar(&f.Questions, "questions", "", "also time Link of every question of this JSONL file (kgqa format) on both graphs, 3 passes, reported before the subgraphs")
}

// Subgraphs is the benchmark of the flags: roots drawn from the entities
// of embedded, both graphs answering.
func (f SubgraphFlags) Subgraphs(embedded, given kg.Graph, givenName string, entities []string) Subgraphs {
	return Subgraphs{Embedded: embedded, Given: given, GivenName: givenName, Pool: QIDsBelow(entities, f.RootsBelow), Seeds: f.Seeds, Rounds: f.Rounds, Seed: f.Seed,
		Params: kg.SubgraphParams{Hops: f.Hops, MaxNodes: f.MaxNodes, HubDegree: f.HubDegree}, Channel: f.Channel}
}

// Run times Link of every --questions question on both graphs (when the
// flag names a file), then the Subgraphs calls, their roots drawn among
// embedded's entities.
func (f SubgraphFlags) Run(ctx context.Context, embedded interface {
	kg.Graph
	AllEntities() []kg.Entity
}, given kg.Graph, givenName string, stdout, stderr io.Writer) error {
	if f.Questions != "" {
		qs, err := ReadQuestions(f.Questions, 0)
		if err != nil {
			return err
		}
		l := Linking{Embedded: embedded, Given: given, GivenName: givenName, Texts: qs, Rounds: 3}
		if err := l.Run(ctx, stdout); err != nil {
			return err
		}
	}
	var pool []string
	for _, e := range embedded.AllEntities() {
		pool = append(pool, e.QID)
	}
	return f.Subgraphs(embedded, given, givenName, pool).Run(ctx, stdout, stderr)
}

// LoadFlags are dmar bench load's flags.
type LoadFlags struct {
	Addr, URL, Levels, Questions, Options, Out string
	PID                                        int
	Duration, Timeout                          time.Duration
}

// Register adds the flags to fs.
func (f *LoadFlags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.Addr, "addr", "127.0.0.1:8080", "the server's HOST:PORT (loopback)")
	fs.StringVar(&f.URL, "url", "", "the server's base URL (overrides --addr)")
	fs.IntVar(&f.PID, "pid", 0, "the server's process id, for RSS samples (0: none)")
	fs.StringVar(&f.Levels, "levels", "1,2,4,8,16,32", "concurrency levels, in order")
	fs.DurationVar(&f.Duration, "duration", 15*time.Second, "time per level")
	fs.StringVar(&f.Questions, "questions", "", "JSONL file with a question field per line (default: built-in questions)")
	fs.StringVar(&f.Options, "options", `"k":5`, "extra JSON members of every request body (retrieve options)")
	fs.StringVar(&f.Out, "out", "", "folder for load.csv, rss.csv, load.png and summary.txt (empty: only print)")
	fs.DurationVar(&f.Timeout, "timeout", 30*time.Second, "client time limit of one request")
}

// Load is the load test of the flags, its client sending apiKey; the
// questions' progress goes to stderr.
func (f LoadFlags) Load(apiKey string, stderr io.Writer) (Load, error) {
	l := Load{PID: f.PID, Duration: f.Duration, Out: f.Out}
	var err error
	if l.Levels, err = ParseLevels(f.Levels); err != nil {
		return l, errs.E(errs.Invalid, "--levels: %v", err)
	}
	if l.Template, err = ParseRequestOptions(f.Options); err != nil {
		return l, errs.E(errs.Invalid, "--options %s: %v", f.Options, err)
	}
	if l.Questions, err = LoadQuestions(f.Questions, stderr); err != nil {
		return l, err
	}
	url := f.URL
	if url == "" {
		url = f.Addr
	}
	if l.Client, err = LoadClient(url, f.Timeout, apiKey); err != nil {
		return l, errs.E(errs.Invalid, "%v", err)
	}
	return l, nil
}

// EmbedFlags are dmar bench embed's flags.
type EmbedFlags struct {
	Encoders      string
	Limit, Rounds int
}

// Register adds the flags to fs.
func (f *EmbedFlags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.Encoders, "encoders", "", "comma-separated registry encoders, the first also measured on the chunked baseline (default: the configured encoder)")
	fs.IntVar(&f.Limit, "limit", 0, "embed only the first N corpus documents (0: all)")
	fs.IntVar(&f.Rounds, "rounds", 1, "alternate the first encoder's baseline and corpus runs this many times")
}

// Texts are the first --limit documents of the corpus file at path as the
// encoder reads them (corpus.EncodeText).
func (f EmbedFlags) Texts(ctx context.Context, path string) ([]string, error) {
	docs, _, err := corpus.ReadFile(ctx, path)
	if err != nil {
		return nil, err
	}
	if f.Limit > 0 && f.Limit < len(docs) {
		docs = docs[:f.Limit]
	}
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = corpus.EncodeText(d)
	}
	return texts, nil
}

// EncoderNames are the --encoders, or configured when none is given.
func (f EmbedFlags) EncoderNames(configured string) ([]string, error) {
	if f.Limit < 0 || f.Rounds < 1 {
		return nil, errs.E(errs.Invalid, "bench embed: --limit %d and --rounds %d: want >= 0 and >= 1", f.Limit, f.Rounds)
	}
	if f.Encoders == "" {
		return []string{configured}, nil
	}
	names, err := ParseEncoders(f.Encoders)
	if err != nil {
		return nil, errs.E(errs.Invalid, "--encoders: %v", err)
	}
	return names, nil
}
