//go:build linux

package session

import (
	"time"

	"golang.org/x/sys/unix"
)

// benchProcessCPU is the CPU time, user and system, that every thread of
// the process has used so far.
func benchProcessCPU() (time.Duration, bool) { return benchClock(unix.CLOCK_PROCESS_CPUTIME_ID) }

// benchThreadCPU is the CPU time the calling OS thread has used so far;
// it measures a goroutine only while that goroutine is locked to its
// thread (runtime.LockOSThread).
func benchThreadCPU() (time.Duration, bool) { return benchClock(unix.CLOCK_THREAD_CPUTIME_ID) }

func benchClock(clock int32) (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(clock, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
