package gobfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRoundTripAndDamage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "x.gob")
	type v struct {
		A string
		B []int
	}
	if err := Write(path, v{"a", []int{1, 2}}); err != nil {
		t.Fatal(err)
	}
	var got v
	if err := Read(path, &got); err != nil || got.A != "a" || len(got.B) != 2 {
		t.Fatalf("read back %+v, %v", got, err)
	}
	if err := os.WriteFile(path, []byte("not a gob"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Read(path, &got); err == nil {
		t.Error("a damaged file reads without error")
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
