//go:build unix && !linux

package transport

// forceBuffers does nothing: only Linux can exceed the system limit.
func forceBuffers(fd, read, write int) {}
