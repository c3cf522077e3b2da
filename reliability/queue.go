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

// payloadPool recycles payload buffers in power-of-two size classes so
// that steady-state sending and receiving do not allocate. It retains at
// most poolMaxBytes in total and poolMaxPerClass buffers of each class.
type payloadPool struct {
	free     [poolClasses][][]byte
	retained int
}

const (
	poolMinClass    = 6  // 64 B
	poolClasses     = 21 // up to 64 MiB
	poolMaxBytes    = 16 << 20
	poolMaxPerClass = 8192
)

func poolClass(n int) int {
	if n <= 1<<poolMinClass {
		return 0
	}
	return bits.Len(uint(n-1)) - poolMinClass
}

// get returns a buffer of length n.
func (p *payloadPool) get(n int) []byte {
	c := poolClass(n)
	if c >= poolClasses {
		return make([]byte, n)
	}
	if l := len(p.free[c]); l > 0 {
		b := p.free[c][l-1]
		p.free[c][l-1] = nil
		p.free[c] = p.free[c][:l-1]
		p.retained -= cap(b)
		return b[:n]
	}
	return make([]byte, n, 1<<(c+poolMinClass))
}

// put returns b to the pool; b must not be used afterwards.
func (p *payloadPool) put(b []byte) {
	c := poolClass(cap(b))
	if c >= poolClasses || cap(b) != 1<<(c+poolMinClass) {
		return // not one of ours
	}
	if len(p.free[c]) >= poolMaxPerClass || p.retained+cap(b) > poolMaxBytes {
		return
	}
	p.retained += cap(b)
	p.free[c] = append(p.free[c], b[:0])
}
