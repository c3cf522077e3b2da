package endpoint

import "math/bits"

// Size classes of bufferPool: powers of two from 64 B to 4 MiB, the
// engine's default maximum message size. Larger buffers are not kept.
const (
	minBufferShift   = 6
	numBufferClasses = 17
)

// bufferPool recycles the buffers that hold user messages between the
// engine and the reader: the engine's payloads are only valid until its
// next ReadMessage, so a session copies each one out, and without reuse
// that copy would be an allocation per message. A reader that keeps up
// (Read, ReadMessageInto) hands every buffer back; ReadMessage gives its
// buffer to the caller for good. At most maxFree bytes wait in the free
// lists, so a burst that filled the receive queue does not stay resident
// beyond that. Not safe for concurrent use; the session's lock guards it.
type bufferPool struct {
	free      [numBufferClasses][][]byte
	freeBytes int
	maxFree   int
}

// bufferClass is the smallest class holding n bytes, or false if none
// does.
func bufferClass(n int) (int, bool) {
	c := max(0, bits.Len(uint(n-1))-minBufferShift)
	return c, n > 0 && c < numBufferClasses
}

// get returns a buffer of length n, recycled if one of n's class is free.
func (p *bufferPool) get(n int) []byte {
	c, ok := bufferClass(n)
	if !ok {
		return make([]byte, n)
	}
	if l := p.free[c]; len(l) > 0 {
		b := l[len(l)-1]
		l[len(l)-1] = nil
		p.free[c] = l[:len(l)-1]
		p.freeBytes -= cap(b)
		return b[:n]
	}
	return make([]byte, n, 1<<(c+minBufferShift))
}

// put takes back a buffer that get returned and nobody uses any more.
func (p *bufferPool) put(b []byte) {
	c, ok := bufferClass(cap(b))
	if !ok || cap(b) != 1<<(c+minBufferShift) || p.freeBytes+cap(b) > p.maxFree {
		return
	}
	p.free[c] = append(p.free[c], b[:0])
	p.freeBytes += cap(b)
}
