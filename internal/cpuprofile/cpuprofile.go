// Package cpuprofile writes a CPU profile of a stretch of a benchmark run,
// for go tool pprof.
package cpuprofile

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// Start profiles the CPU into a new file at path until stop is called; an
// empty path profiles nothing (stop does nothing).
func Start(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
