package reliability

import (
	"testing"
	"time"
)

func TestPayloadPoolReuse(t *testing.T) {
	var p payloadPool
	a := p.get(100)
	if len(a) != 100 || cap(a) != 128 {
		t.Fatalf("get(100): len %d cap %d, want 100 and 128 (small buffers are rounded up)", len(a), cap(a))
	}
	p.put(a)
	if b := p.get(70); cap(b) != 128 || &b[:1][0] != &a[:1][0] {
		t.Errorf("get(70) did not reuse the 128-byte buffer")
	}
	if p.retained != 0 {
		t.Errorf("retained %d after taking the only buffer back", p.retained)
	}

	// Large buffers are allocated to size, and a stream of equal sizes
	// still recycles them (they sit in the class below their size).
	big := p.get(poolRoundUp + 1000)
	if cap(big) != poolRoundUp+1000 {
		t.Errorf("large buffer cap %d, want exact", cap(big))
	}
	p.put(big)
	if b := p.get(poolRoundUp + 1000); &b[:1][0] != &big[:1][0] {
		t.Error("equal-sized large buffer not reused")
	}
	p.put(big)
	if b := p.get(poolRoundUp + 2000); &b[:1][0] == &big[:1][0] || len(b) != poolRoundUp+2000 {
		t.Error("a buffer too small was handed out")
	}

	// Tiny foreign buffers are not kept: they would not fit a 64-byte get.
	p = payloadPool{}
	p.put(make([]byte, 10))
	if p.retained != 0 {
		t.Error("kept a 10-byte buffer")
	}
}

func TestPayloadPoolBounded(t *testing.T) {
	var p payloadPool
	for range 100 {
		p.put(make([]byte, 1<<20))
	}
	if p.retained > poolMaxBytes {
		t.Errorf("retained %d bytes, cap %d", p.retained, poolMaxBytes)
	}
	if p.retained != poolMaxBytes {
		t.Errorf("retained %d bytes, want the cap %d filled with 1 MiB buffers", p.retained, poolMaxBytes)
	}
	for range 2 * poolMaxPerClass {
		p.put(make([]byte, 64))
	}
	if n := len(p.free[0]); n > poolMaxPerClass {
		t.Errorf("%d buffers in one class", n)
	}
	// Buffers beyond the largest class are never kept.
	p = payloadPool{}
	p.put(make([]byte, poolMaxBytes*2))
	if p.retained != 0 {
		t.Error("kept a buffer above the largest class")
	}
}

func TestPayloadPoolNil(t *testing.T) {
	var p *payloadPool
	b := p.get(10)
	if len(b) != 10 {
		t.Fatalf("nil pool get: len %d", len(b))
	}
	p.put(b) // discards
	if c := p.clone([]byte("abc")); string(c) != "abc" {
		t.Errorf("clone = %q", c)
	}
}

// The reassembly budget is charged with the capacity of the buffers the
// pool hands out, and a pooled buffer larger than the budget allows is not
// used.
func TestSplitAssemblerPoolBudget(t *testing.T) {
	var pool payloadPool
	pool.put(make([]byte, 0, 4096)) // the right class, but over budget
	a := newSplitAssembler(splitLimits{maxParts: 16, maxMessages: 4, maxBytes: 4096})
	a.pool = &pool
	part := make([]byte, 1000)
	f := Frame{Reliability: Reliable, Split: true, SplitCount: 3, SplitID: 1, Payload: part}
	if _, v := a.add(&f); v != splitPending {
		t.Fatalf("first part: %v", v)
	}
	if a.heldBytes() > 4096 {
		t.Fatalf("held %d bytes, limit 4096", a.heldBytes())
	}
	if len(pool.free[poolClassDown(4096)]) != 1 {
		t.Errorf("the over-budget pooled buffer was used")
	}
	f.SplitIndex = 2 // out of order
	if _, v := a.add(&f); v != splitPending {
		t.Fatalf("third part: %v", v)
	}
	f.SplitIndex = 1
	msg, v := a.add(&f)
	if v != splitComplete || len(msg) != 3000 {
		t.Fatalf("second part: %v, %d bytes", v, len(msg))
	}
	if a.heldBytes() != 0 {
		t.Errorf("held %d bytes after completion", a.heldBytes())
	}
	// Out of order: the message was copied into a fresh buffer and the
	// reassembly buffer went back to the pool.
	if len(pool.free[poolClassDown(3000)]) != 1 {
		t.Errorf("reassembly buffer not recycled: %v", pool.retained)
	}
}

// An engine keeps at most the larger of MaxQueueBytes and MaxReceiveBytes
// in its pool, so a connection configured small stays small when idle.
func TestEnginePoolBoundedByConfig(t *testing.T) {
	cfg := Config{MaxMessageSize: 64 << 10, MaxQueueBytes: 256 << 10, MaxReceiveBytes: 128 << 10}
	p := newNetPair(t, 13, cfg, impair{loss: 0.05, delay: 5 * time.Millisecond})
	got := 0
	p.onRecv = func(side int, m Message) { got++ }
	const n = 60
	for i := 0; i < n; {
		if _, err := p.e[0].Send(testMsg(uint32(i), 60<<10), ReliableOrdered, 0, Medium, p.now); err != nil {
			p.run(time.Minute, func() bool { return p.e[0].Stats().HeldSendBytes < 128<<10 })
			continue
		}
		i++
	}
	p.run(time.Hour, func() bool { return got == n && p.e[0].Stats().HeldSendBytes == 0 })
	for i, e := range p.e {
		if e.pool.retained == 0 || e.pool.retained > 256<<10 {
			t.Errorf("engine %d keeps %d bytes for reuse, want 1..%d", i, e.pool.retained, 256<<10)
		}
	}
}
