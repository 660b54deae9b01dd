package sinks

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

func TestOpenRejectsBadTargets(t *testing.T) {
	for _, to := range []string{"", "dir", "ftp:dir", "csv:", "neo4j://"} {
		if _, err := Open(context.Background(), "--to", to, func(string) string { return "" }); !errors.Is(err, ErrTarget) {
			t.Errorf("Open(%q): err = %v, want an ErrTarget", to, err)
		}
	}
}

func TestOpenFileTargets(t *testing.T) {
	for _, scheme := range []string{"csv", "bundle"} {
		s, err := Open(context.Background(), "--to", scheme+":"+filepath.Join(t.TempDir(), "out"), func(string) string { return "" })
		if err != nil {
			t.Fatalf("%s: %v", scheme, err)
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatalf("%s: close: %v", scheme, err)
		}
	}
}
