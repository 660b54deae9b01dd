package eval

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/scoring"
)

// fixedRows is a test double for the pipeline's ways in of the exports:
// fixed rows per question (evidence rows, or final-pool rows), an error for
// the question "fail".
type fixedRows[R any] map[string][]R

// RetrieveEvidence is the gate evidence export's way in (R
// pipeline.EvidenceRow).
func (s fixedRows[R]) RetrieveEvidence(ctx context.Context, q string, _ pipeline.Options) (*pipeline.Result, []R, error) {
	if q == "fail" {
		return nil, nil, errors.New("backend down")
	}
	return &pipeline.Result{}, s[q], ctx.Err()
}

// RetrieveRanked is the ranker export's way in (R pipeline.RankRow).
func (s fixedRows[R]) RetrieveRanked(ctx context.Context, q string, o pipeline.Options) (*pipeline.Result, []R, error) {
	return s.RetrieveEvidence(ctx, q, o)
}

// exported runs an export (run) into a new folder, checks what it says of
// the questions and rows (2 run, b skipped, 3 rows) and returns the folder.
func exported(t *testing.T, run func(out string, stdout, stderr io.Writer) error) string {
	t.Helper()
	out := t.TempDir()
	var stdout, stderr strings.Builder
	if err := run(out, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "skipped b") || !strings.Contains(stdout.String(), "2 questions (1 skipped), 3 candidate rows") {
		t.Fatalf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}
	return out
}

// readNpy reads a little-endian .npy file written by npy.Write: its header
// and its values into data (a pointer to a slice of the right type).
func readNpy(t *testing.T, path string, data any) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := int(binary.LittleEndian.Uint16(raw[8:10]))
	header := string(raw[10 : 10+n])
	body := raw[10+n:]
	switch d := data.(type) {
	case *[]float32:
		*d = make([]float32, len(body)/4)
	case *[]int32:
		*d = make([]int32, len(body)/4)
	}
	if err := binary.Read(bytes.NewReader(body), binary.LittleEndian, data); err != nil {
		t.Fatal(err)
	}
	return header
}

// GateEvidence writes one row per candidate with the evidence vector, the
// offset, the question index, the gold label and the stage; a failing
// question is skipped and does not take an index.
func TestGateEvidenceExport(t *testing.T) {
	ev := scoring.Evidence{ZSemantic: 1.5, ZStructural: -0.5, Linked: 2, Reached: true, PathRelevance: 0.4, LinkConfMean: 0.9, LinkConfMin: 0.8}
	src := fixedRows[pipeline.EvidenceRow]{
		"q1": {{Stage: "first", ID: "D1", Evidence: ev, Offset: 40}, {Stage: "second", ID: "D2"}},
		"q2": {{Stage: "second", ID: "D3", Evidence: scoring.Evidence{ZSemantic: -1}}},
	}
	qs := []Question{{ID: "a", Question: "q1", Gold: []string{"D2"}}, {ID: "b", Question: "fail"}, {ID: "c", Question: "q2", Gold: []string{"D3", "D9"}}}
	out := exported(t, func(out string, stdout, stderr io.Writer) error {
		return GateEvidence(context.Background(), src, qs, pipeline.Defaults(), out, stdout, stderr)
	})
	var feat, offset []float32
	var rows, ngold []int32
	nf := len(scoring.EvidenceFeatures)
	if h := readNpy(t, filepath.Join(out, "feat.npy"), &feat); !strings.Contains(h, "(3, 13)") || nf != 13 {
		t.Fatalf("feat header %q (%d features)", h, nf)
	}
	readNpy(t, filepath.Join(out, "offset.npy"), &offset)
	readNpy(t, filepath.Join(out, "rows.npy"), &rows)
	readNpy(t, filepath.Join(out, "ngold.npy"), &ngold)
	if !reflect.DeepEqual(feat[:nf], ev.Vector()) || feat[2*nf] != -1 {
		t.Errorf("feature rows %v", feat)
	}
	if !reflect.DeepEqual(offset, []float32{40, 0, 0}) {
		t.Errorf("offsets %v", offset)
	}
	// question index, label, stage
	if want := []int32{0, 0, 0, 0, 1, 1, 1, 1, 1}; !reflect.DeepEqual(rows, want) {
		t.Errorf("rows %v, want %v", rows, want)
	}
	if !reflect.DeepEqual(ngold, []int32{1, 2}) {
		t.Errorf("ngold %v", ngold)
	}
	var names []string
	raw, _ := os.ReadFile(filepath.Join(out, "features.json"))
	if err := json.Unmarshal(raw, &names); err != nil || !reflect.DeepEqual(names, scoring.EvidenceFeatures) {
		t.Errorf("features.json %s: %v", raw, err)
	}
	if err := GateEvidence(context.Background(), src, qs[1:2], pipeline.Defaults(), t.TempDir(), io.Discard, io.Discard); err == nil {
		t.Error("no question run: no error")
	}
}
