package endpoint

import "github.com/netrak/netrak/internal/bufpool"

// bufferPool recycles the buffers that hold user messages between the
// engine and the reader: the engine's payloads are only valid until its
// next ReadMessage, so a session copies each one out, and without reuse
// that copy would be an allocation per message. A reader that keeps up
// (Read, ReadMessageInto) hands every buffer back; ReadMessage gives its
// buffer to the caller for good. Buffers are whole size classes up to
// 4 MiB, the engine's default maximum message size; larger ones are not
// kept. At most maxFree bytes wait in the free lists, so a burst that
// filled the receive queue does not stay resident beyond that. Not safe
// for concurrent use; the session's lock guards it.
type bufferPool struct {
	bufs    bufpool.Pool
	maxFree int
}

func (p *bufferPool) limits() bufpool.Limits {
	return bufpool.Limits{MaxSize: 4 << 20, RoundUp: 4 << 20, MaxBytes: p.maxFree}
}

// get returns a buffer of length n, recycled if one of n's class is free.
func (p *bufferPool) get(n int) []byte { return p.bufs.Get(n, p.limits()) }

// put takes back a buffer that get returned and nobody uses any more.
func (p *bufferPool) put(b []byte) { p.bufs.Put(b, p.limits()) }
