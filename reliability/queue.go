package reliability

import "github.com/netrak/netrak/internal/bufpool"

// fifo is a FIFO queue on a power-of-two circular buffer. It grows by
// doubling and never shrinks, so a queue in steady state does not
// allocate.
type fifo[T any] struct {
	buf        []T
	head, size int
}

func (r *fifo[T]) len() int { return r.size }

func (r *fifo[T]) push(v T) {
	if r.size == len(r.buf) {
		r.grow()
	}
	r.buf[(r.head+r.size)&(len(r.buf)-1)] = v
	r.size++
}

func (r *fifo[T]) grow() {
	n := max(2*len(r.buf), 16)
	nb := make([]T, n)
	for i := 0; i < r.size; i++ {
		nb[i] = r.buf[(r.head+i)&(len(r.buf)-1)]
	}
	r.buf, r.head = nb, 0
}

// peek returns a pointer to the oldest element; the queue must not be empty.
func (r *fifo[T]) peek() *T { return &r.buf[r.head] }

func (r *fifo[T]) pop() T {
	var zero T
	v := r.buf[r.head]
	r.buf[r.head] = zero
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.size--
	return v
}

// payloadPool recycles payload buffers so that steady-state sending and
// receiving do not allocate: the send queue's copies, reassembled split
// messages, payloads held for ordering and delivered messages all come
// from it, and go back when the engine is done with them (a delivered
// payload when the application reads the next message). It keeps at most
// the larger of MaxQueueBytes and MaxReceiveBytes (so an idle connection
// keeps no more than a busy one may use), in classes up to 16 MiB, and
// poolMaxPerClass buffers of each class; past that, a returned buffer is
// left to the garbage collector. New buffers up to 64 KiB get their
// class's whole capacity, so messages of varying small sizes share
// buffers; larger ones are allocated to size.
//
// The nil pool is valid: get allocates and put discards.
type payloadPool struct {
	bufs   bufpool.Pool
	limits bufpool.Limits
}

const poolMaxPerClass = 8192

// newPayloadPool returns a pool that keeps at most maxBytes.
func newPayloadPool(maxBytes int) payloadPool {
	return payloadPool{limits: bufpool.Limits{
		MaxSize:     bufpool.MaxClassSize,
		RoundUp:     64 << 10,
		MaxPerClass: poolMaxPerClass,
		MaxBytes:    maxBytes,
	}}
}

// get returns a buffer of length n (capacity at least n).
func (p *payloadPool) get(n int) []byte {
	if p == nil {
		return make([]byte, n)
	}
	return p.bufs.Get(n, p.limits)
}

// clone returns a copy of b in a buffer from the pool.
func (p *payloadPool) clone(b []byte) []byte {
	c := p.get(len(b))
	copy(c, b)
	return c
}

// put returns b to the pool; b must not be used afterwards, and must not
// be referenced anywhere else (a buffer put twice would be handed out
// twice).
func (p *payloadPool) put(b []byte) {
	if p != nil {
		p.bufs.Put(b, p.limits)
	}
}
