//go:build linux

package onnx

import "syscall"

// lowerThreadPriority sets the calling OS thread's nice value: on Linux
// PRIO_PROCESS with a thread id applies to that thread alone. The caller
// must hold the thread (runtime.LockOSThread).
func lowerThreadPriority(nice int) error {
	return syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), nice)
}
