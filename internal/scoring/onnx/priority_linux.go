//go:build linux

package onnx

import (
	"fmt"
	"syscall"
	"unsafe"
)

// schedIdle is Linux's SCHED_IDLE policy: the thread runs only when no
// normal thread of its group wants the CPU, and a normal thread that wakes
// up preempts it at once. Unlike a nice value, it needs no privilege.
const schedIdle = 5

// lowerThreadPriority gives the calling OS thread nice value nice (on
// Linux PRIO_PROCESS with a thread id applies to that thread alone) and,
// when idle, the SCHED_IDLE policy. The caller must hold the thread
// (runtime.LockOSThread): neither can be undone without privilege.
func lowerThreadPriority(nice int, idle bool) error {
	tid := syscall.Gettid()
	if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, nice); err != nil {
		return fmt.Errorf("setpriority nice %d: %w", nice, err)
	}
	if !idle {
		return nil
	}
	var param struct{ priority int32 } // struct sched_param; 0 for SCHED_IDLE
	if _, _, e := syscall.RawSyscall(syscall.SYS_SCHED_SETSCHEDULER, uintptr(tid), schedIdle, uintptr(unsafe.Pointer(&param))); e != 0 {
		return fmt.Errorf("sched_setscheduler SCHED_IDLE: %w", e)
	}
	return nil
}
