package textgraph

import (
	"bufio"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"

	"github.com/dmar-kg/dmar/internal/errs"
)

//go:embed spacy_extract.py
var spacyScript string

// spacyBatch is how many passages go to the process in one request.
const spacyBatch = 64

// Spacy is the spaCy extractor: named entities (counts and amounts left
// out) and noun phrases from en_core_web_sm, run by Python processes that
// dmar starts when first needed and keeps (scripts/setup/50-spacy.sh
// installs spaCy and the model into a virtual environment in the cache;
// Python names its interpreter). A call's batches of passages go to up to
// Processes processes at once: one spaCy process keeps one core busy, and
// it is most of a text graph's build once phrase vectors are cached. Each
// passage's extraction is the same whichever process does it. Safe for
// concurrent use.
type Spacy struct {
	Python    string // the interpreter of the environment that holds spaCy
	Processes int    // at most this many processes (0: one); each holds about 215 MB

	once  sync.Once
	procs chan *spacyProc // the idle ones
	all   []*spacyProc
}

// Name implements Extractor.
func (s *Spacy) Name() string { return "spacy" }

func (s *Spacy) init() {
	s.once.Do(func() {
		n := max(1, s.Processes)
		s.procs = make(chan *spacyProc, n)
		for range n {
			p := &spacyProc{python: s.Python}
			s.all = append(s.all, p)
			s.procs <- p
		}
	})
}

// Model is the model's name and version, once a process has started.
func (s *Spacy) Model() string {
	s.init()
	for _, p := range s.all {
		if m := p.Model(); m != "" {
			return m
		}
	}
	return ""
}

// Extract implements Extractor. A process that cannot start (no
// interpreter, no spaCy) is an errs.Unavailable error that says how to
// install it; a process that dies is started again on the next call.
func (s *Spacy) Extract(ctx context.Context, ps []Passage) ([]Extraction, error) {
	s.init()
	out := make([]Extraction, len(ps))
	errc := make(chan error, 1)
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for lo := 0; lo < len(ps); lo += spacyBatch {
		var p *spacyProc
		select {
		case p = <-s.procs:
		case <-ctx.Done():
		}
		if p == nil {
			break
		}
		part := ps[lo:min(lo+spacyBatch, len(ps))]
		wg.Go(func() {
			defer func() { s.procs <- p }()
			ex, err := p.extract(ctx, part)
			if err != nil {
				select {
				case errc <- err:
				default:
				}
				cancel()
				return
			}
			copy(out[lo:], ex)
		})
	}
	wg.Wait()
	select {
	case err := <-errc:
		return nil, err
	default:
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// PeakRSS is the peak resident memory of the processes, summed (0 when
// none runs).
func (s *Spacy) PeakRSS() int64 { return sumProcs(s, (*spacyProc).PeakRSS) }

// CPUSeconds is the CPU time of the running processes, summed.
func (s *Spacy) CPUSeconds() float64 { return sumProcs(s, (*spacyProc).CPUSeconds) }

func sumProcs[T int64 | float64](s *Spacy, f func(*spacyProc) T) T {
	s.init()
	var n T
	for _, p := range s.all {
		n += f(p)
	}
	return n
}

// Close stops the processes; a later Extract starts them again.
func (s *Spacy) Close() error {
	s.init()
	for _, p := range s.all {
		p.Close()
	}
	return nil
}

// spacyProc is one spaCy process; its requests take turns.
type spacyProc struct {
	python string

	mu      sync.Mutex
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *bufio.Reader
	model   string
	stderr  *strings.Builder
	started bool
}

// Model is the model's name and version, once the process has started.
func (s *spacyProc) Model() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.model
}

// extract is Spacy.Extract on this process.
func (s *spacyProc) extract(ctx context.Context, ps []Passage) ([]Extraction, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Extraction, 0, len(ps))
	for lo := 0; lo < len(ps); lo += spacyBatch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		part := ps[lo:min(lo+spacyBatch, len(ps))]
		ex, err := s.batch(part)
		if err != nil {
			s.stop()
			return nil, err
		}
		out = append(out, ex...)
	}
	return out, nil
}

func (s *spacyProc) batch(ps []Passage) ([]Extraction, error) {
	if err := s.start(); err != nil {
		return nil, err
	}
	texts := make([]string, len(ps))
	for i, p := range ps {
		texts[i] = PassageText(p)
	}
	req, err := json.Marshal(map[string][]string{"texts": texts})
	if err != nil {
		return nil, err
	}
	if _, err := s.in.Write(append(req, '\n')); err != nil {
		return nil, s.failed("write to", err)
	}
	line, err := s.out.ReadBytes('\n')
	if err != nil {
		return nil, s.failed("read from", err)
	}
	var res struct {
		Phrases [][]Phrase `json:"phrases"`
	}
	if err := json.Unmarshal(line, &res); err != nil {
		return nil, fmt.Errorf("spacy extractor: bad answer: %w", err)
	}
	if len(res.Phrases) != len(ps) {
		return nil, fmt.Errorf("spacy extractor: %d answers for %d passages", len(res.Phrases), len(ps))
	}
	out := make([]Extraction, len(ps))
	for i, phs := range res.Phrases {
		out[i] = Extraction{Phrases: dedupe(phs)}
	}
	return out, nil
}

// start starts the process and waits for the model to load.
func (s *spacyProc) start() error {
	if s.started {
		return nil
	}
	if s.python == "" {
		return errs.E(errs.Unavailable, "spacy extractor: no Python interpreter configured (make setup installs spaCy; textgraph.python names it)")
	}
	if _, err := os.Stat(s.python); err != nil {
		return errs.E(errs.Unavailable, "spacy extractor: %s: %v (make setup installs spaCy into the cache)", s.python, err)
	}
	cmd := exec.Command(s.python, "-c", spacyScript)
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	outp, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	s.stderr = &strings.Builder{}
	cmd.Stderr = limitedWriter{s.stderr, 4096}
	if err := cmd.Start(); err != nil {
		return errs.E(errs.Unavailable, "spacy extractor: start %s: %v", s.python, err)
	}
	s.cmd, s.in, s.out, s.started = cmd, in, bufio.NewReaderSize(outp, 1<<20), true
	line, err := s.out.ReadBytes('\n')
	if err != nil {
		return s.failed("start", err)
	}
	var ready struct {
		Ready string `json:"ready"`
	}
	if err := json.Unmarshal(line, &ready); err != nil || ready.Ready == "" {
		return fmt.Errorf("spacy extractor: unexpected first line %.200q", line)
	}
	s.model = ready.Ready
	return nil
}

// failed is the error of a process that stopped answering, with what it
// wrote on stderr.
func (s *spacyProc) failed(what string, err error) error {
	msg := ""
	if s.stderr != nil {
		msg = strings.TrimSpace(s.stderr.String())
	}
	s.stop()
	if msg != "" {
		return errs.E(errs.Unavailable, "spacy extractor: %s the process: %v: %s", what, err, lastLines(msg, 3))
	}
	return errs.E(errs.Unavailable, "spacy extractor: %s the process: %v", what, err)
}

// stop ends the process; the next call starts another.
func (s *spacyProc) stop() {
	if !s.started {
		return
	}
	s.in.Close()
	if s.cmd.Process != nil {
		_ = s.cmd.Process.Kill() // it may have exited already
	}
	_ = s.cmd.Wait() // killed: its exit status says nothing
	s.started = false
}

// PeakRSS is the process's peak resident memory in bytes (Linux's VmHWM),
// 0 when it is not running or that cannot be read.
func (s *spacyProc) PeakRSS() int64 {
	for _, line := range strings.Split(s.proc("status"), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// CPUSeconds is the CPU time (user and system) the process has used so
// far, 0 when it is not running or that cannot be read (Linux's
// /proc/PID/stat, in clock ticks of 1/100 s).
func (s *spacyProc) CPUSeconds() float64 {
	// The fields after the command's closing parenthesis: utime and stime
	// are the 12th and 13th.
	rest := s.proc("stat")
	if i := strings.LastIndexByte(rest, ')'); i >= 0 {
		rest = rest[i+1:]
	}
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (u + st) / 100
}

// proc is the process's /proc file name, "" when it is not running or the
// file cannot be read.
func (s *spacyProc) proc(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started || s.cmd.Process == nil {
		return ""
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", s.cmd.Process.Pid, name))
	if err != nil {
		return ""
	}
	return string(b)
}

// Close ends the process.
func (s *spacyProc) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stop()
	return nil
}

// dedupe keeps each phrase key's first occurrence, named before noun.
func dedupe(phs []Phrase) []Phrase {
	seen := map[string]bool{}
	out := phs[:0]
	for _, p := range phs {
		k := Key(p.Text)
		if k == "" || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, p)
	}
	return out
}

type limitedWriter struct {
	b *strings.Builder
	n int
}

func (w limitedWriter) Write(p []byte) (int, error) {
	if room := w.n - w.b.Len(); room > 0 {
		w.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], " | ")
}

// SpacyVersion names what decides the spaCy extractor's output: its script
// (the model's version is pinned by the setup step that installs it).
func SpacyVersion() string {
	h := sha256.Sum256([]byte(spacyScript))
	return hex.EncodeToString(h[:6]) + "-en_core_web_sm-3.8.0"
}
