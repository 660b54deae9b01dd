package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

// The table of dmar query, byte for byte (testdata/table.golden was written
// by the renderer's earlier home, cmd/dmar's printTable).
func TestWriteTable(t *testing.T) {
	raw, err := os.ReadFile("testdata/table_response.json")
	if err != nil {
		t.Fatal(err)
	}
	var r RetrieveResponse
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/table.golden")
	if err != nil {
		t.Fatal(err)
	}
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
