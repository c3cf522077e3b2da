package endpoint

import "testing"

func TestBufferPool(t *testing.T) {
	p := bufferPool{maxFree: 4096}
	for _, c := range []struct{ n, capacity int }{
		{1, 64}, {64, 64}, {65, 128}, {100, 128}, {1024, 1024}, {1025, 2048}, {4 << 20, 4 << 20},
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
	if b := p.get(100); &b[0] == &a[0] {
		t.Error("a buffer was handed out twice")
	}

	// The free lists stop at maxFree bytes.
	for range 3 {
		p.put(make([]byte, 2048))
	}
	if p.freeBytes != 4096 || len(p.free[5]) != 2 {
		t.Errorf("free lists hold %d bytes in %d buffers, want 4096 in 2", p.freeBytes, len(p.free[5]))
	}
	// Buffers that get did not make are not kept.
	p.put(make([]byte, 100))
	p.put(make([]byte, 5<<20))
	if p.freeBytes != 4096 {
		t.Errorf("free lists hold %d bytes after foreign buffers, want 4096", p.freeBytes)
	}
}
