package reliability

import "math/bits"

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
// payload when the application reads the next message). It retains at
// most maxBytes of capacity in total (poolMaxBytes if zero; the engine sets
// the larger of MaxQueueBytes and MaxReceiveBytes, so an idle connection
// keeps no more than a busy one may use) and poolMaxPerClass buffers of
// each size class; past that, a returned buffer is left to the garbage
// collector.
//
// A free buffer sits in the class of the largest power of two not above
// its capacity. get(n) takes a buffer from the class of the smallest power
// of two not below n, whose every buffer fits, or else the last buffer of
// the class below if it happens to fit (a stream of equal-sized messages
// recycles its buffers exactly). New buffers up to poolRoundUp bytes are
// allocated with their class's full capacity, so messages of varying small
// sizes share buffers; larger ones are allocated to size, so a big buffer
// never wastes up to half its memory.
//
// The nil pool is valid: get allocates and put discards.
type payloadPool struct {
	free     [poolClasses][][]byte
	retained int
	maxBytes int
}

const (
	poolMinClass    = 6  // 64 B
	poolClasses     = 19 // up to 16 MiB
	poolMaxBytes    = 16 << 20
	poolMaxPerClass = 8192
	poolRoundUp     = 64 << 10
)

// poolClassUp is the class whose buffers all hold at least n bytes.
func poolClassUp(n int) int {
	if n <= 1<<poolMinClass {
		return 0
	}
	return bits.Len(uint(n-1)) - poolMinClass
}

// poolClassDown is the class a buffer of capacity c is kept in; -1 for a
// buffer too small to keep.
func poolClassDown(c int) int {
	if c < 1<<poolMinClass {
		return -1
	}
	return bits.Len(uint(c)) - 1 - poolMinClass
}

// get returns a buffer of length n (capacity at least n).
func (p *payloadPool) get(n int) []byte {
	c := poolClassUp(n)
	if p == nil || c >= poolClasses {
		return make([]byte, n)
	}
	if l := len(p.free[c]); l > 0 {
		return p.take(c, l-1)[:n]
	}
	if d := c - 1; d >= 0 {
		if l := len(p.free[d]); l > 0 && cap(p.free[d][l-1]) >= n {
			return p.take(d, l-1)[:n]
		}
	}
	if n <= poolRoundUp {
		return make([]byte, n, 1<<(c+poolMinClass))
	}
	return make([]byte, n)
}

func (p *payloadPool) take(c, i int) []byte {
	b := p.free[c][i]
	p.free[c][i] = nil
	p.free[c] = p.free[c][:i]
	p.retained -= cap(b)
	return b
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
	c := poolClassDown(cap(b))
	if p == nil || c < 0 || c >= poolClasses {
		return
	}
	limit := p.maxBytes
	if limit == 0 {
		limit = poolMaxBytes
	}
	if len(p.free[c]) >= poolMaxPerClass || p.retained+cap(b) > limit {
		return
	}
	p.retained += cap(b)
	p.free[c] = append(p.free[c], b[:0])
}
