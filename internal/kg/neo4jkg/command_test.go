package neo4jkg

import (
	"flag"
	"io"
	"testing"

	"github.com/dmar-kg/dmar/internal/errs"
)

func TestLegacyFlags(t *testing.T) {
	fs := flag.NewFlagSet("load neo4j", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	graph, kgDir := fs.String("graph", "", ""), fs.String("kg", "", "")
	var o LoadOptions
	o.RegisterFlags(fs)
	old, err := RegisterLegacyFlags(fs, "bolt://default:7687")
	if err != nil || *graph != "bolt://default:7687" {
		t.Fatalf("graph %q, err %v", *graph, err)
	}
	if err := fs.Parse([]string{"--uri", "bolt://h:7687", "--bundle", "/b", "--user", "u", "--batch", "7"}); err != nil {
		t.Fatal(err)
	}
	if *graph != "bolt://h:7687" || *kgDir != "/b" || old.User != "u" || o.Batch != 7 {
		t.Fatalf("graph %q kg %q user %q batch %d", *graph, *kgDir, old.User, o.Batch)
	}
	if err := old.Check(o, true); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		o     LoadOptions
		neo4j bool
	}{{LoadOptions{AfterImport: true}, true}, {o, false}} {
		if err := old.Check(c.o, c.neo4j); errs.CodeOf(err) != errs.Invalid {
			t.Errorf("Check(%+v, %v) = %v, want an invalid-argument error", c.o, c.neo4j, err)
		}
	}
}
