package wikidata

import (
	"flag"
	"io"
	"reflect"
	"testing"

	"github.com/dmar-kg/dmar/internal/errs"
)

func TestFlagsOptions(t *testing.T) {
	parse := func(args ...string) (Options, error) {
		fs := flag.NewFlagSet("load wikidata", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var f Flags
		f.Register(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return f.Options(io.Discard)
	}
	o, err := parse("--dump", "d.json", "--to", "csv:x", "--lang", "de, en", "--seeds", "Q1,Q2", "--hops", "2",
		"--properties", "P31,,P279", "--relations", "none", "--quiet")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(o.Languages, []string{"de", "en"}) || !reflect.DeepEqual(o.Seeds, []string{"Q1", "Q2"}) || o.Hops != 2 ||
		!reflect.DeepEqual(o.Properties, map[string]bool{"P31": true, "P279": true}) || o.PropertiesTSV != "" || o.Progress != nil || o.Log == nil {
		t.Fatalf("options %+v", o)
	}
	if o, _ := parse("--dump", "d", "--to", "csv:x", "--hops", "3", "--relations", "r.tsv"); o.Hops != 0 || o.PropertiesTSV != "r.tsv" || o.Progress == nil {
		t.Fatalf("without seeds: %+v", o)
	}
	if _, err := parse("--dump", "d"); errs.CodeOf(err) != errs.Invalid {
		t.Fatalf("no --to: err = %v, want an invalid-argument error", err)
	}
}
