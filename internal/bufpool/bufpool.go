// Package bufpool recycles byte buffers by power-of-two size class, so that
// code which holds messages of varying sizes for a while (the reliability
// engine's payloads, a connection's queue of messages for its reader) does
// not allocate once traffic is steady. Each user states its own Limits:
// how large a buffer is worth keeping, which new buffers are rounded up to
// a whole class, and how much memory may sit idle.
//
// A Pool is not safe for concurrent use; its owner's lock guards it.
package bufpool

import "math/bits"

const (
	minShift = 6  // the smallest class: 64 B
	classes  = 19 // up to MaxClassSize
	// MaxClassSize is the largest class: Limits.MaxSize is at most this.
	MaxClassSize = 1 << (minShift + classes - 1) // 16 MiB
)

// Limits say which buffers a Pool makes and which it keeps.
type Limits struct {
	// MaxSize is the largest class, a power of two from 64 B to
	// MaxClassSize. Longer buffers are allocated to size and never kept.
	MaxSize int
	// RoundUp is the longest buffer allocated with its class's whole
	// capacity, so that messages of varying small sizes share buffers.
	// Longer ones are allocated to size: a large buffer rounded up could
	// waste almost half its memory.
	RoundUp int
	// MaxPerClass, if nonzero, is the most buffers kept in one class.
	MaxPerClass int
	// MaxBytes is the most capacity kept in all classes together, so that
	// a burst does not stay resident after it.
	MaxBytes int
}

// Pool holds free buffers by class. The zero value is empty and ready.
//
// A free buffer sits in the class of the largest power of two not above
// its capacity. Get(n) takes a buffer from the class of the smallest power
// of two not below n, whose every buffer fits, or else the last buffer of
// the class below if it happens to fit, so that a stream of equal-sized
// messages longer than RoundUp recycles its buffers exactly.
type Pool struct {
	free     [classes][][]byte
	retained int
}

// classUp is the class whose buffers all hold at least n bytes.
func classUp(n int) int {
	if n <= 1<<minShift {
		return 0
	}
	return bits.Len(uint(n-1)) - minShift
}

// classDown is the class a buffer of capacity c >= 64 is kept in.
func classDown(c int) int { return bits.Len(uint(c)) - 1 - minShift }

// Get returns a buffer of length n, recycled if one fits.
func (p *Pool) Get(n int, l Limits) []byte {
	if n > l.MaxSize || n > MaxClassSize {
		return make([]byte, n)
	}
	c := classUp(n)
	if k := len(p.free[c]); k > 0 {
		return p.take(c, k-1)[:n]
	}
	if d := c - 1; d >= 0 {
		if k := len(p.free[d]); k > 0 && cap(p.free[d][k-1]) >= n {
			return p.take(d, k-1)[:n]
		}
	}
	if n <= l.RoundUp {
		return make([]byte, n, 1<<(c+minShift))
	}
	return make([]byte, n)
}

func (p *Pool) take(c, i int) []byte {
	b := p.free[c][i]
	p.free[c][i] = nil
	p.free[c] = p.free[c][:i]
	p.retained -= cap(b)
	return b
}

// Put keeps b for a later Get, within l. b must not be used afterwards,
// nor be referenced anywhere else: a buffer put twice would be handed out
// twice.
func (p *Pool) Put(b []byte, l Limits) {
	n := cap(b)
	if n < 1<<minShift || n > l.MaxSize || n > MaxClassSize || p.retained+n > l.MaxBytes {
		return
	}
	c := classDown(n)
	if l.MaxPerClass > 0 && len(p.free[c]) >= l.MaxPerClass {
		return
	}
	p.retained += n
	p.free[c] = append(p.free[c], b[:0])
}

// Retained is the capacity of the buffers kept.
func (p *Pool) Retained() int { return p.retained }

// Kept is how many buffers are kept in the class a buffer of capacity c
// would go to.
func (p *Pool) Kept(c int) int {
	if c < 1<<minShift || c > MaxClassSize {
		return 0
	}
	return len(p.free[classDown(c)])
}
