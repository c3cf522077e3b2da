//go:build !linux

package session

import "time"

// The CPU-time clocks are read on Linux only; elsewhere the benchmarks
// that need them skip, and the others leave out their CPU metrics.

func benchProcessCPU() (time.Duration, bool) { return 0, false }
func benchThreadCPU() (time.Duration, bool)  { return 0, false }
