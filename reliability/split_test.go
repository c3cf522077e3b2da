package reliability

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/netrak/netrak/internal/rakwire"
)

// splitParts cuts msg into parts of at most partLen bytes, as a sender does.
func splitParts(msg []byte, partLen int, id uint16, hdr rakwire.Frame) []rakwire.Frame {
	count := (len(msg) + partLen - 1) / partLen
	var out []rakwire.Frame
	for i := 0; i < count; i++ {
		f := hdr
		f.Split, f.SplitID, f.SplitCount, f.SplitIndex = true, id, uint32(count), uint32(i)
		f.ReliableIndex = hdr.ReliableIndex + uint32(i)
		f.Payload = msg[i*partLen : min(len(msg), (i+1)*partLen)]
		out = append(out, f)
	}
	return out
}

func testMessage(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) + seed
	}
	return b
}

func TestSplitAssemblerOrders(t *testing.T) {
	hdr := rakwire.Frame{Reliability: rakwire.ReliableOrdered, OrderingIndex: 9, OrderingChannel: 4}
	for _, order := range []string{"in order", "reversed", "shuffled"} {
		var a splitAssembler
		msg := testMessage(70000, 1)
		parts := splitParts(msg, 1400, 77, hdr)
		switch order {
		case "reversed":
			for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
				parts[i], parts[j] = parts[j], parts[i]
			}
		case "shuffled":
			rng := rand.New(rand.NewPCG(1, 2))
			rng.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
		}
		for i := range parts {
			got, v := a.add(&parts[i])
			if i < len(parts)-1 {
				if v != splitPending || got != nil {
					t.Fatalf("%s: part %d: %v", order, i, v)
				}
				if a.heldBytes() > DefaultMaxReassemblyBytes || a.heldBytes() < (i+1)*1400 {
					t.Fatalf("%s: held %d after %d parts", order, a.heldBytes(), i+1)
				}
				continue
			}
			if v != splitComplete || !bytes.Equal(got, msg) {
				t.Fatalf("%s: last part: %v, %d bytes, equal %v", order, v, len(got), bytes.Equal(got, msg))
			}
		}
		if a.heldBytes() != 0 || a.pending() != 0 {
			t.Errorf("%s: %d bytes, %d messages left", order, a.heldBytes(), a.pending())
		}
	}
}

func TestSplitAssemblerCopiesInput(t *testing.T) {
	var a splitAssembler
	msg := testMessage(300, 3)
	parts := splitParts(bytes.Clone(msg), 100, 1, rakwire.Frame{Reliability: rakwire.Reliable})
	for i := range parts {
		got, v := a.add(&parts[i])
		for j := range parts[i].Payload {
			parts[i].Payload[j] = 0xee // the datagram buffer gets reused
		}
		if v == splitComplete && !bytes.Equal(got, msg) {
			t.Fatal("message changed with its input buffers")
		}
	}
	// A one-part split completes at once, also as a copy.
	one := rakwire.Frame{Reliability: rakwire.Reliable, Split: true, SplitCount: 1, Payload: []byte{1, 2, 3}}
	got, v := a.add(&one)
	one.Payload[0] = 9
	if v != splitComplete || !bytes.Equal(got, []byte{1, 2, 3}) {
		t.Fatalf("one-part split: %v %v", v, got)
	}
}

func TestSplitAssemblerInconsistent(t *testing.T) {
	var a splitAssembler
	hdr := rakwire.Frame{Reliability: rakwire.ReliableOrdered, OrderingIndex: 5, OrderingChannel: 1}
	parts := splitParts(testMessage(400, 0), 100, 3, hdr)
	if _, v := a.add(&parts[1]); v != splitPending {
		t.Fatal(v)
	}
	held := a.heldBytes()
	tests := []struct {
		name string
		edit func(f *rakwire.Frame)
		want splitVerdict
	}{
		{"same part again", func(f *rakwire.Frame) {}, splitDuplicate},
		{"same index, other length", func(f *rakwire.Frame) { f.Payload = f.Payload[:50] }, splitInconsistent},
		{"other count", func(f *rakwire.Frame) { f.SplitCount, f.SplitIndex = 5, 2 }, splitInconsistent},
		{"other channel", func(f *rakwire.Frame) { f.OrderingChannel = 2; f.SplitIndex = 2 }, splitInconsistent},
		{"other ordering index", func(f *rakwire.Frame) { f.OrderingIndex = 6; f.SplitIndex = 2 }, splitInconsistent},
		{"other kind", func(f *rakwire.Frame) { f.Reliability = rakwire.Reliable; f.SplitIndex = 2 }, splitInconsistent},
		{"index out of range", func(f *rakwire.Frame) { f.SplitIndex = 4 }, splitInconsistent},
		{"count zero", func(f *rakwire.Frame) { f.SplitCount, f.SplitIndex = 0, 0 }, splitInconsistent},
	}
	for _, tt := range tests {
		f := parts[1]
		tt.edit(&f)
		if got, v := a.add(&f); v != tt.want || got != nil {
			t.Errorf("%s: %v, want %v", tt.name, v, tt.want)
		}
		if a.heldBytes() != held {
			t.Errorf("%s: held bytes changed from %d to %d", tt.name, held, a.heldBytes())
		}
	}
	// The genuine parts still complete the message.
	var got []byte
	for _, i := range []int{0, 2, 3} {
		got, _ = a.add(&parts[i])
	}
	if !bytes.Equal(got, testMessage(400, 0)) {
		t.Error("message not reassembled after rejected parts")
	}
}

func TestSplitAssemblerLimits(t *testing.T) {
	a := newSplitAssembler(splitLimits{maxParts: 100, maxMessages: 2, maxBytes: 10000})
	part := func(id uint16, count, index uint32, n int) *rakwire.Frame {
		return &rakwire.Frame{Reliability: rakwire.Reliable, Split: true, SplitID: id, SplitCount: count, SplitIndex: index, Payload: make([]byte, n)}
	}
	if _, v := a.add(part(1, 101, 0, 10)); v != splitTooManyParts || v.transient() {
		t.Errorf("101 parts: %v", v)
	}
	if _, v := a.add(part(1, 100, 0, 10)); v != splitPending {
		t.Errorf("100 parts: %v", v)
	}
	if _, v := a.add(part(2, 2, 0, 10)); v != splitPending {
		t.Errorf("second message: %v", v)
	}
	if _, v := a.add(part(3, 2, 0, 10)); v != splitTooManyMessages || !v.transient() {
		t.Errorf("third message: %v", v)
	}
	if msg, v := a.add(part(2, 2, 1, 10)); v != splitComplete || len(msg) != 20 {
		t.Errorf("completing the second: %v", v)
	}
	if _, v := a.add(part(3, 2, 0, 10)); v != splitPending {
		t.Errorf("third message after one completed: %v", v)
	}
	// Bytes: message 1 may grow until the budget is spent, then refuses.
	var v splitVerdict
	i := uint32(1)
	for ; i < 100; i++ {
		if _, v = a.add(part(1, 100, i, 100)); v != splitPending {
			break
		}
		if a.heldBytes() > 10000 {
			t.Fatalf("held %d bytes, limit 10000", a.heldBytes())
		}
	}
	if v != splitOverBudget || !v.transient() {
		t.Fatalf("part %d: %v, want over budget", i, v)
	}
	if a.heldBytes() > 10000 {
		t.Fatalf("held %d bytes, limit 10000", a.heldBytes())
	}
}

// TestSplitAssemblerEvictsUnreliable: an unreliable split message that lost
// a part gives up its slot to a new message; reliable ones never do.
func TestSplitAssemblerEvictsUnreliable(t *testing.T) {
	a := newSplitAssembler(splitLimits{maxMessages: 2})
	part := func(r Reliability, id uint16, index uint32) *rakwire.Frame {
		return &rakwire.Frame{Reliability: kind(r), Split: true, SplitID: id, SplitCount: 2, SplitIndex: index, Payload: []byte{byte(id)}}
	}
	a.add(part(Unreliable, 1, 0))
	a.add(part(Reliable, 2, 0))
	if _, v := a.add(part(Reliable, 3, 0)); v != splitPending || a.evicted != 1 {
		t.Fatalf("new message with a stale unreliable one: %v, evicted %d", v, a.evicted)
	}
	if _, v := a.add(part(Reliable, 4, 0)); v != splitTooManyMessages {
		t.Fatalf("reliable messages evicted: %v", v)
	}
	// The evicted message's late part starts it afresh.
	if _, v := a.add(part(Unreliable, 1, 1)); v != splitTooManyMessages {
		t.Fatalf("late part: %v", v)
	}
	if msg, v := a.add(part(Reliable, 2, 1)); v != splitComplete || len(msg) != 2 {
		t.Fatalf("reliable message: %v", v)
	}
	if a.pending() != 1 || a.heldBytes() == 0 {
		t.Errorf("%d pending, %d bytes", a.pending(), a.heldBytes())
	}
}

// TestSplitAssemblerHostileCounts: first parts announcing the largest
// allowed counts are charged for their part tables, so memory stays within
// the limit however many arrive.
func TestSplitAssemblerHostileCounts(t *testing.T) {
	a := newSplitAssembler(splitLimits{maxParts: 8192, maxMessages: 1000, maxBytes: 1 << 20})
	accepted := 0
	for id := 0; id < 1000; id++ {
		f := rakwire.Frame{Reliability: rakwire.Reliable, Split: true, SplitID: uint16(id), SplitCount: 8192, SplitIndex: 8191, Payload: make([]byte, 1400)}
		if _, v := a.add(&f); v == splitPending {
			accepted++
		}
		if a.heldBytes() > 1<<20 {
			t.Fatalf("held %d bytes after %d messages", a.heldBytes(), id+1)
		}
	}
	// Each costs its table (64 KiB) plus the part: about 15 fit in 1 MiB.
	if accepted == 0 || accepted > 16 {
		t.Errorf("accepted %d hostile messages", accepted)
	}
}

// BenchmarkSplitAssembler reassembles a 64 KiB message from 1400-byte
// parts, handing each finished message back to the pool as the engine does
// once the application has read it.
func BenchmarkSplitAssembler(b *testing.B) {
	pool := newPayloadPool(16 << 20)
	a := splitAssembler{pool: &pool}
	parts := splitParts(testMessage(64<<10, 0), 1400, 0, rakwire.Frame{Reliability: rakwire.ReliableOrdered})
	b.SetBytes(64 << 10)
	b.ReportAllocs()
	for b.Loop() {
		for i := range parts {
			msg, v := a.add(&parts[i])
			if v != splitPending && v != splitComplete {
				b.Fatal(v)
			}
			pool.put(msg)
		}
	}
}
