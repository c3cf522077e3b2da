package delay

import "sync"

// pooledSize is the capacity of pooled buffers: enough for any datagram that
// fits a typical path MTU. Larger datagrams get a buffer of their own.
const pooledSize = 2048

var pool = sync.Pool{New: func() any { b := make([]byte, pooledSize); return &b }}

// Copy returns a buffer holding a copy of p. Give it back with Release once
// its contents are no longer needed.
func Copy(p []byte) *[]byte {
	var b *[]byte
	if len(p) <= pooledSize {
		b = pool.Get().(*[]byte)
		*b = (*b)[:len(p)]
	} else {
		s := make([]byte, len(p))
		b = &s
	}
	copy(*b, p)
	return b
}

// Release returns a buffer from Copy to the pool.
func Release(b *[]byte) {
	if cap(*b) == pooledSize {
		*b = (*b)[:pooledSize]
		pool.Put(b)
	}
}
