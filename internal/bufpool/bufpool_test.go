package bufpool

import "testing"

// The two users' limits: the reliability engine's payloads and a
// connection's queue for its reader.
var (
	payloads = Limits{MaxSize: 16 << 20, RoundUp: 64 << 10, MaxPerClass: 8192, MaxBytes: 16 << 20}
	reader   = Limits{MaxSize: 4 << 20, RoundUp: 4 << 20, MaxBytes: 4096}
)

func same(a, b []byte) bool { return &a[:1][0] == &b[:1][0] }

func TestGetCapacity(t *testing.T) {
	var p Pool
	for _, c := range []struct {
		l           Limits
		n, capacity int
	}{
		{reader, 1, 64}, {reader, 64, 64}, {reader, 65, 128}, {reader, 100, 128},
		{reader, 1024, 1024}, {reader, 1025, 2048}, {reader, 4 << 20, 4 << 20},
		{reader, 4<<20 + 1, 4<<20 + 1}, // past the largest class: exact
		{payloads, 100, 128}, {payloads, 64 << 10, 64 << 10},
		{payloads, 64<<10 + 1, 64<<10 + 1}, // past RoundUp: exact
		{payloads, 16<<20 + 1, 16<<20 + 1},
	} {
		if b := p.Get(c.n, c.l); len(b) != c.n || cap(b) != c.capacity {
			t.Errorf("Get(%d) with %+v: len %d cap %d, want cap %d", c.n, c.l, len(b), cap(b), c.capacity)
		}
	}
}

func TestReuse(t *testing.T) {
	var p Pool
	a := p.Get(100, payloads)
	p.Put(a, payloads)
	if b := p.Get(70, payloads); cap(b) != 128 || !same(a, b) {
		t.Errorf("Get(70) did not reuse the 128-byte buffer")
	}
	if p.Retained() != 0 {
		t.Errorf("retained %d after taking the only buffer back", p.Retained())
	}
	if b := p.Get(100, payloads); same(a, b) {
		t.Error("a buffer was handed out twice")
	}

	// Large buffers are allocated to size, and a stream of equal sizes
	// still recycles them (they sit in the class below their size).
	n := payloads.RoundUp + 1000
	big := p.Get(n, payloads)
	p.Put(big, payloads)
	if b := p.Get(n, payloads); !same(b, big) {
		t.Error("equal-sized large buffer not reused")
	}
	p.Put(big, payloads)
	if b := p.Get(n+1000, payloads); same(b, big) || len(b) != n+1000 {
		t.Error("a buffer too small was handed out")
	}
}

func TestPutBounds(t *testing.T) {
	var p Pool
	// The free lists stop at MaxBytes.
	for range 3 {
		p.Put(make([]byte, 2048), reader)
	}
	if p.Retained() != 4096 || p.Kept(2048) != 2 {
		t.Errorf("kept %d bytes in %d buffers, want 4096 in 2", p.Retained(), p.Kept(2048))
	}
	p = Pool{}
	for range 100 {
		p.Put(make([]byte, 1<<20), payloads)
	}
	if p.Retained() != payloads.MaxBytes {
		t.Errorf("kept %d bytes, want MaxBytes %d filled with 1 MiB buffers", p.Retained(), payloads.MaxBytes)
	}
	// And at MaxPerClass buffers in a class.
	p = Pool{}
	for range 2 * payloads.MaxPerClass {
		p.Put(make([]byte, 64), payloads)
	}
	if n := p.Kept(64); n != payloads.MaxPerClass {
		t.Errorf("%d buffers in one class, want %d", n, payloads.MaxPerClass)
	}

	// Buffers below the smallest class or above MaxSize are not kept.
	p = Pool{}
	for _, c := range []int{0, 10, 63, 4<<20 + 1, 5 << 20} {
		p.Put(make([]byte, c), Limits{MaxSize: 4 << 20, MaxBytes: 1 << 30})
	}
	p.Put(make([]byte, 32<<20), Limits{MaxSize: 32 << 20, MaxBytes: 1 << 30})
	if p.Retained() != 0 {
		t.Errorf("kept %d bytes of buffers outside the classes", p.Retained())
	}
	var zero Limits
	p.Put(make([]byte, 64), zero)
	if p.Retained() != 0 {
		t.Error("zero limits kept a buffer")
	}
}

// Steady traffic through a pool allocates nothing.
func TestSteadyStateAllocs(t *testing.T) {
	var p Pool
	sizes := []int{5, 100, 576, 1400, 70000}
	allocs := testing.AllocsPerRun(100, func() {
		var held [5][]byte
		for i, n := range sizes {
			held[i] = p.Get(n, payloads)
		}
		for _, b := range held {
			p.Put(b, payloads)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per round", allocs)
	}
}

func BenchmarkGetPut(b *testing.B) {
	var p Pool
	for i := 0; b.Loop(); i++ {
		p.Put(p.Get(64+i%1400, payloads), payloads)
	}
}
