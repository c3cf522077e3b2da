package reliability

import (
	"testing"
	"time"

	"github.com/netrak/netrak/internal/rakwire"
)

// The engine's pool rounds small buffers up to their class, so messages of
// varying sizes share them, and allocates large ones to size.
func TestPayloadPoolPolicy(t *testing.T) {
	p := newPayloadPool(1 << 20)
	if b := p.get(100); len(b) != 100 || cap(b) != 128 {
		t.Errorf("get(100): len %d cap %d, want 100 and 128", len(b), cap(b))
	}
	if b := p.get(70000); cap(b) != 70000 {
		t.Errorf("get(70000): cap %d, want exact", cap(b))
	}
	for range 2 * poolMaxPerClass {
		p.put(make([]byte, 64))
	}
	if n := p.bufs.Kept(64); n != poolMaxPerClass {
		t.Errorf("%d buffers kept in one class, want %d", n, poolMaxPerClass)
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
	pool := newPayloadPool(1 << 20)
	pool.put(make([]byte, 0, 4096)) // the right class, but over budget
	a := newSplitAssembler(splitLimits{maxParts: 16, maxMessages: 4, maxBytes: 4096})
	a.pool = &pool
	part := make([]byte, 1000)
	f := rakwire.Frame{Reliability: rakwire.Reliable, Split: true, SplitCount: 3, SplitID: 1, Payload: part}
	if _, v := a.add(&f); v != splitPending {
		t.Fatalf("first part: %v", v)
	}
	if a.heldBytes() > 4096 {
		t.Fatalf("held %d bytes, limit 4096", a.heldBytes())
	}
	if pool.bufs.Kept(4096) != 1 {
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
	if pool.bufs.Kept(3000) != 1 {
		t.Errorf("reassembly buffer not recycled: %v", pool.bufs.Retained())
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
		if r := e.pool.bufs.Retained(); r == 0 || r > 256<<10 {
			t.Errorf("engine %d keeps %d bytes for reuse, want 1..%d", i, r, 256<<10)
		}
	}
}
