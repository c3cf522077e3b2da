package reliability

import (
	"encoding/binary"
	"testing"
	"time"
)

// testMsg builds message id of the given size whose bytes can be checked.
func testMsg(id uint32, size int) []byte {
	b := make([]byte, size)
	for k := range b {
		b[k] = byte(int(id)*31 + k*7)
	}
	if size >= 4 {
		binary.LittleEndian.PutUint32(b, id)
	}
	return b
}

func checkMsg(t testing.TB, b []byte, id uint32, size int) {
	t.Helper()
	if len(b) != size {
		t.Fatalf("message %d: %d bytes, want %d", id, len(b), size)
	}
	want := testMsg(id, size)
	for k := range b {
		if b[k] != want[k] {
			t.Fatalf("message %d: byte %d is %#x, want %#x", id, k, b[k], want[k])
		}
	}
}

func TestEngineReliableOrderedBackToBack(t *testing.T) {
	p := newNetPair(t, 1, Config{}, impair{loss: 0.2, dup: 0.1, delay: 20 * time.Millisecond, jitter: 15 * time.Millisecond})
	const n = 600
	sizes := []int{4, 100, 1400, 5000, 70000}
	next := [3]uint32{}
	got := 0
	p.onRecv = func(side int, m Message) {
		if side != 1 {
			t.Fatalf("side %d got a message", side)
		}
		ch := m.Channel
		id := binary.LittleEndian.Uint32(m.Payload)
		if id != next[ch]*3+uint32(ch) {
			t.Fatalf("channel %d: got message %d, want %d", ch, id, next[ch]*3+uint32(ch))
		}
		checkMsg(t, m.Payload, id, sizes[id%uint32(len(sizes))])
		next[ch]++
		got++
	}
	for i := uint32(0); i < n; i++ {
		for {
			_, err := p.e[0].Send(testMsg(i, sizes[i%uint32(len(sizes))]), ReliableOrdered, uint8(i%3), Medium, p.now)
			if err == nil {
				break
			}
			if err != ErrQueueFull {
				t.Fatal(err)
			}
			p.run(time.Minute, func() bool { return p.e[0].Stats().HeldSendBytes < DefaultMaxQueueBytes/2 })
		}
	}
	p.run(time.Hour, func() bool { return got == n })
	s := p.e[0].Stats()
	t.Logf("sender: %+v", s)
	t.Logf("receiver drops: %+v", p.e[1].Stats().Drops)
}

var lossy = impair{loss: 0.2, dup: 0.1, delay: 20 * time.Millisecond, jitter: 15 * time.Millisecond}

func mustSend(t testing.TB, e *Engine, msg []byte, r Reliability, ch uint8, prio Priority, now time.Time) uint32 {
	t.Helper()
	id, err := e.Send(msg, r, ch, prio, now)
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	return id
}

func TestEngineSequencedNeverOlder(t *testing.T) {
	for _, kind := range []Reliability{UnreliableSequenced, ReliableSequenced} {
		t.Run(kind.String(), func(t *testing.T) {
			p := newNetPair(t, 2, Config{}, lossy)
			last := map[uint8]int64{0: -1, 5: -1}
			delivered := 0
			p.onRecv = func(side int, m Message) {
				id := int64(binary.LittleEndian.Uint32(m.Payload))
				if id <= last[m.Channel] {
					t.Fatalf("channel %d: message %d delivered after %d", m.Channel, id, last[m.Channel])
				}
				if m.Reliability != kind && m.Reliability != kind.Reliable() {
					t.Fatalf("got kind %v", m.Reliability)
				}
				last[m.Channel] = id
				delivered++
			}
			const n = 2000
			for i := 0; i < n; i++ {
				size := 8
				if i%50 == 0 {
					size = 3000 // split: upgraded to ReliableSequenced
				}
				ch := uint8(0)
				if i%2 == 1 {
					ch = 5
				}
				mustSend(t, p.e[0], testMsg(uint32(i), size), kind, ch, Medium, p.now)
				if i%20 == 0 {
					p.run(time.Hour, func() bool { return true })
					p.now = p.now.Add(5 * time.Millisecond)
				}
			}
			p.run(time.Hour, func() bool { return p.e[0].Stats().HeldSendBytes == 0 && len(p.q) == 0 })
			if kind == ReliableSequenced && (last[0] != n-2 || last[5] != n-1) {
				t.Errorf("newest messages not delivered: last %v", last)
			}
			t.Logf("%v: %d of %d delivered, stale drops %d", kind, delivered, n, p.e[1].Stats().Drops.StaleSequenced)
		})
	}
}

func TestEngineUnreliableNeverResent(t *testing.T) {
	p := newNetPair(t, 3, Config{}, lossy)
	seen := map[uint32]bool{}
	p.onRecv = func(side int, m Message) {
		id := binary.LittleEndian.Uint32(m.Payload)
		if seen[id] {
			t.Fatalf("message %d delivered twice", id)
		}
		if m.Reliability != Unreliable {
			t.Fatalf("kind %v", m.Reliability)
		}
		seen[id] = true
	}
	const n = 3000
	for i := uint32(0); i < n; i++ {
		mustSend(t, p.e[0], testMsg(i, 4+int(i%900)), Unreliable, 0, Medium, p.now)
		if i%10 == 0 {
			p.run(time.Hour, func() bool { return true })
			p.now = p.now.Add(2 * time.Millisecond)
		}
	}
	p.run(time.Hour, func() bool { return p.e[0].Stats().HeldSendBytes == 0 && len(p.q) == 0 })
	s := p.e[0].Stats()
	if s.Resends != 0 {
		t.Errorf("%d unreliable frames resent", s.Resends)
	}
	if s.FramesSent != n {
		t.Errorf("%d frames sent for %d unreliable messages", s.FramesSent, n)
	}
	if len(seen) == n || len(seen) < n/2 {
		t.Errorf("%d of %d delivered under 20%% loss", len(seen), n)
	}
}

func TestEngineReceiptsExactlyOnce(t *testing.T) {
	p := newNetPair(t, 4, Config{}, lossy)
	const n = 1500
	kinds := []Reliability{UnreliableWithAckReceipt, ReliableWithAckReceipt, ReliableOrderedWithAckReceipt}
	kindOf := map[uint32]Reliability{}
	fired := map[uint32]EventKind{}
	drain := func() {
		for {
			ev, ok := p.e[0].ReadEvent()
			if !ok {
				return
			}
			if _, dup := fired[ev.Receipt]; dup {
				t.Fatalf("receipt %d fired twice", ev.Receipt)
			}
			k, known := kindOf[ev.Receipt]
			if !known {
				t.Fatalf("event %v for unknown receipt %d", ev.Kind, ev.Receipt)
			}
			if ev.Kind == EventLost && k != UnreliableWithAckReceipt {
				t.Fatalf("%v message %d reported lost", k, ev.Receipt)
			}
			fired[ev.Receipt] = ev.Kind
		}
	}
	delivered := map[uint32]int{}
	p.onRecv = func(side int, m Message) {
		delivered[binary.LittleEndian.Uint32(m.Payload)]++
	}
	for i := uint32(0); i < n; i++ {
		k := kinds[i%3]
		size := 10 + int(i%40)
		if i%100 == 7 {
			size = 4000 // split
		}
		r := mustSend(t, p.e[0], testMsg(i, size), k, 1, Medium, p.now)
		if r == 0 {
			t.Fatal("receipt kind got receipt 0")
		}
		kindOf[r] = k
		if i%10 == 0 {
			p.run(time.Hour, func() bool { return true })
			drain()
			p.now = p.now.Add(3 * time.Millisecond)
		}
	}
	p.run(time.Hour, func() bool { drain(); return len(fired) == n })
	p.now = p.now.Add(10 * time.Second)
	p.run(time.Hour, func() bool { return true })
	drain()
	lost := 0
	for r, ev := range fired {
		if ev == EventLost {
			lost++
		}
		if ev == EventAcked && kindOf[r].IsReliable() && delivered[r-1] != 1 {
			t.Errorf("receipt %d acked, message delivered %d times", r, delivered[r-1])
		}
	}
	if lost == 0 {
		t.Error("no unreliable receipt reported lost under 20% loss")
	}
	if got := p.e[0].Stats().HeldSendBytes; got != 0 {
		t.Errorf("%d bytes still held", got)
	}
}

// startNear moves every 24-bit counter of a connection's two ends to v,
// so a short test crosses the wrap at 2^24, and the 16-bit split id to
// just below its wrap.
func startNear(a, b *Engine, v uint32) {
	for _, e := range []*Engine{a, b} {
		e.sent.base, e.sent.next = v, v
		e.rel.low, e.rel.next = v, v
		e.rx.pipe.rel = newReliableWindow(0)
		e.rx.pipe.rel.base = v
		e.rx.pipe.acks.next = v
		for c := range NumOrderingChannels {
			e.orderingNext[c] = v
			e.sequenceNext[c] = v
			e.rx.pipe.order.ch[c].next = v
			e.rx.pipe.order.ch[c].seqNext = v
		}
		e.nextSplitID = 0xffff - 3
	}
}

func TestEngineWrap24(t *testing.T) {
	p := newNetPair(t, 5, Config{}, lossy)
	startNear(p.e[0], p.e[1], seqSpace-60)
	startNear(p.e[1], p.e[0], seqSpace-60)
	const n = 3000
	var next [2]uint32
	seqLast := int64(-1)
	p.onRecv = func(side int, m Message) {
		id := binary.LittleEndian.Uint32(m.Payload)
		switch m.Reliability {
		case ReliableOrdered:
			if id != next[side] {
				t.Fatalf("side %d: message %d, want %d", side, id, next[side])
			}
			next[side]++
		case ReliableSequenced:
			if int64(id) <= seqLast {
				t.Fatalf("sequenced %d after %d", id, seqLast)
			}
			seqLast = int64(id)
		}
	}
	for i := uint32(0); i < n; i++ {
		size := 20 + int(i%300)
		if i%50 == 0 {
			size = 3000 // split
		}
		mustSend(t, p.e[0], testMsg(i, size), ReliableOrdered, 2, Medium, p.now)
		mustSend(t, p.e[1], testMsg(i, 20), ReliableOrdered, 2, Medium, p.now)
		if i%5 == 0 {
			mustSend(t, p.e[0], testMsg(n+i, 12), ReliableSequenced, 3, Medium, p.now)
		}
		if i%20 == 0 {
			p.run(time.Hour, func() bool { return true })
			p.now = p.now.Add(2 * time.Millisecond)
		}
	}
	p.run(time.Hour, func() bool { return next[0] == n && next[1] == n })
	for i, e := range p.e {
		if e.sent.next > seqSpace/2 || e.rel.next > seqSpace/2 || e.orderingNext[2] > seqSpace/2 {
			t.Errorf("engine %d did not cross the wrap: datagram %d, reliable %d, ordering %d", i, e.sent.next, e.rel.next, e.orderingNext[2])
		}
		if i == 0 && (e.sequenceNext[3] > seqSpace/2 || e.nextSplitID > 0x8000) {
			t.Errorf("sequencing index %d, split id %d did not wrap", e.sequenceNext[3], e.nextSplitID)
		}
	}
}
