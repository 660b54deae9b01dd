package sparql

import (
	"bytes"
	"flag"
	"io"
	"testing"
	"time"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/kg"
)

func TestFlagsOptions(t *testing.T) {
	fs := flag.NewFlagSet("load sparql", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f Flags
	f.Register(fs, "http://e/sparql")
	if err := fs.Parse([]string{"--seeds", "Q1, Q2", "--to", "bundle:x", "--page", "7"}); err != nil {
		t.Fatal(err)
	}
	o, err := f.Options(io.Discard)
	if err != nil || o.Endpoint != "http://e/sparql" || len(o.Seeds) != 2 || o.Seeds[1] != "Q2" || o.PageSize != 7 || o.ChunkSize != 200 || o.Progress == nil {
		t.Fatalf("options %+v, err %v", o, err)
	}
	f.To = ""
	if _, err := f.Options(nil); errs.CodeOf(err) != errs.Invalid {
		t.Fatalf("no --to: err = %v, want an invalid-argument error", err)
	}
}

func TestStatsReport(t *testing.T) {
	var b bytes.Buffer
	Stats{Counts: kg.Counts{Read: 3, Loaded: 2, Bad: 1, Problems: []string{"x"}}, Entities: 4, Queries: 5, Elapsed: 1500 * time.Microsecond}.Report(&b)
	want := "read 3, loaded 2, filtered 0, bad 1\n  bad: x\n4 entities, 0 triples, 0 relations from 5 queries in 2ms\n"
	if b.String() != want {
		t.Fatalf("got %q, want %q", b.String(), want)
	}
}
