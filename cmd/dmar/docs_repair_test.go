package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/docstore"
	"github.com/dmar-kg/dmar/internal/docstore/docstoretest"
	"github.com/dmar-kg/dmar/internal/retrieval/memindex"
)

// dmar docs repair finds the logs under a state folder, reports a dry run
// without changing anything, then repairs: the damaged file is kept.
func TestDocsRepairCommand(t *testing.T) {
	ctx := context.Background()
	state := t.TempDir()
	dir := filepath.Join(state, "documents", "0123456789abcdef")
	st, err := docstore.Open(ctx, docstore.Config{Dir: dir, Index: memindex.New(memindex.DefaultParams()), Graph: docstoretest.Graph(),
		Encoder: &docstoretest.Encoder{}, Replay: true, Logger: docstoretest.Quiet()})
	if err != nil {
		t.Fatal(err)
	}
	var mid int64
	for i, id := range []string{"a", "b", "c"} {
		if i == 1 {
			mid = st.LogBytes() + 40
		}
		if _, err := st.Put(ctx, []docstore.Input{{ID: id, Text: "about London"}}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	path := filepath.Join(dir, docstore.LogFile)
	b, _ := os.ReadFile(path)
	b[mid] ^= 1
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	if err := Run(ctx, []string{"docs", "repair", "--state", state, "--dry-run"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, b) || !strings.Contains(out.String(), "would keep 2 intact records") {
		t.Fatalf("dry run changed the log or says:\n%s", out.String())
	}
	out.Reset()
	if err := Run(ctx, []string{"docs", "repair", "--state", state}, &out, &out); err != nil {
		t.Fatal(err)
	}
	kept, _ := filepath.Glob(path + ".damaged-*")
	if !strings.Contains(out.String(), "1 record lost") || len(kept) != 1 {
		t.Fatalf("repair kept %v and says:\n%s", kept, out.String())
	}
	if err := Run(ctx, []string{"docs", "repair"}, &out, &out); err == nil {
		t.Error("no --state: no error")
	}
}
