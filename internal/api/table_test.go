package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/testfile"
)

// The table of dmar query, byte for byte (testdata/table.golden was written
// by the renderer's earlier home, cmd/dmar's printTable).
func TestWriteTable(t *testing.T) {
	raw := testfile.Read(t, "testdata/table_response.json")
	var r RetrieveResponse
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatal(err)
	}
	want := testfile.Read(t, "testdata/table.golden")
	var b bytes.Buffer
	if err := WriteTable(&b, &r); err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

// An empty answer still has every section; no entities reads "none".
func TestWriteTableEmpty(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTable(&b, &RetrieveResponse{Query: "q"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Query:        q\n", "Entities:     none\n", "Anchors\n", "\nResults\n", "\nTimings (ms): \n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "Paths") {
		t.Errorf("a paths section for results that name none:\n%s", b.String())
	}
	if strings.Contains(b.String(), "Fallbacks") {
		t.Errorf("fallbacks with none:\n%s", b.String())
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteTableError(t *testing.T) {
	if err := WriteTable(failWriter{}, &RetrieveResponse{}); err == nil || err.Error() != "disk full" {
		t.Errorf("err = %v", err)
	}
}

// The query table's "found in" names every place the learned ranker's
// result came from, the document that named it among them.
func TestFoundIn(t *testing.T) {
	for _, c := range []struct {
		r    *RankBreakdown
		want string
	}{
		{nil, "-"},
		{&RankBreakdown{}, "-"},
		{&RankBreakdown{Stage1Rank: 3, GraphRank: 1, TextRank: 7}, "Q#3 kg#1 text#7"},
		{&RankBreakdown{Stage2Rank: 2, Own: true, NamedBy: "Q25191"}, "Q'#2 own page named by Q25191"},
	} {
		if got := foundIn(c.r); got != c.want {
			t.Errorf("foundIn(%+v) = %q, want %q", c.r, got, c.want)
		}
	}
}
