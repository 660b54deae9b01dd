package cpuprofile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A path gets a profile go tool pprof reads (gzip-compressed protobuf); no
// path writes nothing; a path that cannot be created is an error naming it.
func TestStart(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cpu.pprof")
	stop, err := Start(path)
	if err != nil {
		t.Fatal(err)
	}
	stop()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("profile is not gzip data: % x", b[:min(len(b), 8)])
	}

	stop, err = Start("")
	if err != nil {
		t.Fatal(err)
	}
	stop()
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Fatalf("an empty path wrote files: %v", es)
	}

	bad := filepath.Join(dir, "missing", "cpu.pprof")
	if _, err := Start(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("Start(%q) = %v, want an error naming the path", bad, err)
	}
}
