package endpoint

import "testing"

// The reader's pool rounds every buffer up to its class, up to 4 MiB, and
// keeps at most maxFree bytes.
func TestBufferPool(t *testing.T) {
	p := bufferPool{maxFree: 4096}
	for _, c := range []struct{ n, capacity int }{
		{1, 64}, {100, 128}, {1025, 2048}, {4 << 20, 4 << 20},
		{4<<20 + 1, 4<<20 + 1}, // past the largest class: exact, not pooled
	} {
		if b := p.get(c.n); len(b) != c.n || cap(b) != c.capacity {
			t.Errorf("get(%d): len %d cap %d, want cap %d", c.n, len(b), cap(b), c.capacity)
		}
	}
	a := p.get(100)
	p.put(a)
	if b := p.get(128); &b[0] != &a[0] {
		t.Error("a buffer of the same class was not reused")
	}
	for range 3 {
		p.put(make([]byte, 2048))
	}
	p.put(make([]byte, 5<<20))
	if p.bufs.Retained() != 4096 {
		t.Errorf("free lists hold %d bytes, want maxFree, 4096", p.bufs.Retained())
	}
}
