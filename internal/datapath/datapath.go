// Package datapath finds the shared real data sets (../shared/data beside the
// repository) for tests, demos and benchmarks. DMAR_SHARED_DATA overrides it.
package datapath

import (
	"errors"

	"os"
	"path/filepath"

	"github.com/dmar-kg/dmar/internal/config"
)

// Root returns the shared data directory: $DMAR_SHARED_DATA if set, else
// ../shared/data relative to the repository root found above the working
// directory (the directory holding go.mod).
func Root() (string, error) {
	if d := config.SharedData(os.Getenv); d != "" {
		return d, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			d := filepath.Join(dir, "..", "shared", "data")
			if _, err := os.Stat(d); err != nil {
				return "", errors.New("shared data not found at " + d + " (set DMAR_SHARED_DATA)")
			}
			return filepath.Clean(d), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("repository root (go.mod) not found above the working directory; set DMAR_SHARED_DATA")
		}
		dir = parent
	}
}

// Dataset returns Root()/name.
func Dataset(name string) (string, error) {
	r, err := Root()
	if err != nil {
		return "", err
	}
	return filepath.Join(r, name), nil
}
