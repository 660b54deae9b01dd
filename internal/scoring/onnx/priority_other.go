//go:build !linux

package onnx

import "errors"

// lowerThreadPriority has no per-thread priority to set outside Linux: the
// background workers then run at the process's priority.
func lowerThreadPriority(int, bool) error {
	return errors.New("per-thread priority is only set on Linux")
}
