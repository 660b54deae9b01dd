package eval

import (
	"flag"
	"io"
	"path/filepath"
	"testing"

	"github.com/dmar-kg/dmar/internal/config"
	"github.com/dmar-kg/dmar/internal/errs"
)

func TestFlagsPrepare(t *testing.T) {
	prepare := func(args ...string) (*Dataset, []System, string, error) {
		fs := flag.NewFlagSet("eval", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var f Flags
		f.Register(fs, config.Reader{})
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return f.Prepare(t.TempDir(), "", "")
	}
	for _, args := range [][]string{
		{"--out", "o"},
		{"--dataset", "hotpotqa:testdata/hotpot", "--out", "o", "--k-max", "0"},
		{"--dataset", "hotpotqa:testdata/hotpot", "--out", "o", "--reader-url", "http://r"},
		{"--dataset", "nope:x", "--out", "o"},
		{"--dataset", "hotpotqa:testdata/hotpot", "--out", "o", "--systems", "bogus"},
		{"--dataset", "hotpotqa:testdata/hotpot", "--out", "o", "--systems", "dmar", "--linking", "fuzzy"},
	} {
		if _, _, _, err := prepare(args...); errs.CodeOf(err) != errs.Invalid {
			t.Errorf("%v: err = %v, want an invalid-argument error", args, err)
		}
	}
	ds, sys, corpus, err := prepare("--dataset", "hotpotqa:testdata/hotpot", "--out", "o", "--systems", "bm25,dmar")
	if err != nil || len(ds.Questions) == 0 || len(sys) != 2 || filepath.Ext(corpus) != ".jsonl" {
		t.Fatalf("ds %v, systems %v, corpus %q, err %v", ds != nil, sys, corpus, err)
	}
	if o := sys[1].Options; o.Linking != "context" {
		t.Errorf("dmar's linking %q, want its own (context)", o.Linking)
	}
	if _, sys, _, err := prepare("--dataset", "hotpotqa:testdata/hotpot", "--out", "o", "--systems", "dmar-paper,dmar,dmar-no-link-filter"); err != nil || sys[0].Options.Linking != "" || sys[2].Options.Linking != "exact" {
		t.Fatalf("dmar-paper and dmar-no-link-filter link exactly: %v, %v", sys, err)
	}
	if _, sys, _, err := prepare("--dataset", "hotpotqa:testdata/hotpot", "--out", "o", "--systems", "dmar-paper,dmar", "--linking", "exact"); err != nil || sys[0].Options.Linking != "exact" || sys[1].Options.Linking != "exact" {
		t.Fatalf("--linking exact overrides every system's: %v, %v", sys, err)
	}
	if c, err := CorpusFor(ds, t.TempDir(), "mine.jsonl"); c != "mine.jsonl" || err != nil {
		t.Fatalf("CorpusFor with a corpus = %q, %v", c, err)
	}
}
