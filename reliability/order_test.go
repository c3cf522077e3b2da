package reliability

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/netrak/netrak/internal/rakwire"
)

// ordered and sequenced build message frames whose payloads name them.
func ordered(ch uint8, idx uint32) (rakwire.Frame, []byte) {
	return rakwire.Frame{Reliability: rakwire.ReliableOrdered, OrderingChannel: ch, OrderingIndex: idx}, []byte(fmt.Sprintf("o%d", idx))
}

func sequenced(r Reliability, ch uint8, ord, seq uint32) (rakwire.Frame, []byte) {
	return rakwire.Frame{Reliability: kind(r), OrderingChannel: ch, OrderingIndex: ord, SequencingIndex: seq}, []byte(fmt.Sprintf("s%d.%d", ord, seq))
}

func payloads(ms []recvMessage) []string {
	var out []string
	for _, m := range ms {
		out = append(out, string(m.Payload))
	}
	return out
}

func TestOrderingHoldsUntilGapFills(t *testing.T) {
	var o orderingChannels
	var out []recvMessage
	var v orderVerdict
	for _, idx := range []uint32{2, 1, 4} {
		f, p := ordered(3, idx)
		if out, v = o.receive(out, &f, p, false); v != orderHeld {
			t.Fatalf("index %d: %v", idx, v)
		}
	}
	if n, b := o.held(); n != 3 || b != 6 {
		t.Fatalf("held %d messages, %d bytes", n, b)
	}
	f, p := ordered(3, 0)
	out, v = o.receive(out, &f, p, false)
	if v != orderDelivered {
		t.Fatal(v)
	}
	if diff := cmp.Diff([]string{"o0", "o1", "o2"}, payloads(out)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if out[0].Owned || !out[1].Owned || out[0].Channel != 3 {
		t.Errorf("ownership/channel wrong: %+v", out[:2])
	}
	// Another channel is independent.
	f, p = ordered(4, 0)
	if out, v = o.receive(out[:0], &f, p, false); v != orderDelivered || len(out) != 1 {
		t.Fatalf("channel 4: %v %v", v, payloads(out))
	}
	f, p = ordered(3, 1)
	if _, v = o.receive(nil, &f, p, false); v != orderDuplicate {
		t.Errorf("redelivered index: %v", v)
	}
	f, p = ordered(3, 3)
	out, _ = o.receive(out[:0], &f, p, false)
	if diff := cmp.Diff([]string{"o3", "o4"}, payloads(out)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if n, b := o.held(); n != 0 || b != 0 {
		t.Errorf("held %d messages, %d bytes at the end", n, b)
	}
}

func TestOrderingCopiesHeldPayloads(t *testing.T) {
	var o orderingChannels
	f, p := ordered(0, 1)
	o.receive(nil, &f, p, false)
	p[0] = 'X' // the datagram buffer is reused
	f0, p0 := ordered(0, 0)
	out, _ := o.receive(nil, &f0, p0, false)
	if got := payloads(out); !cmp.Equal(got, []string{"o0", "o1"}) {
		t.Errorf("held payload changed with its datagram: %v", got)
	}
	// An owned payload is kept as is.
	own := []byte("mine")
	f2 := rakwire.Frame{Reliability: rakwire.ReliableOrdered, OrderingIndex: 3}
	o.receive(nil, &f2, own, true)
	f1 := rakwire.Frame{Reliability: rakwire.ReliableOrdered, OrderingIndex: 2}
	out, _ = o.receive(nil, &f1, []byte("x"), true)
	if len(out) != 2 || &out[1].Payload[0] != &own[0] {
		t.Error("owned payload was copied")
	}
}

func TestOrderingSequenced(t *testing.T) {
	for _, kind := range []Reliability{UnreliableSequenced, ReliableSequenced} {
		var o orderingChannels
		var out []recvMessage
		var v orderVerdict
		recv := func(f rakwire.Frame, p []byte, want orderVerdict) {
			t.Helper()
			out, v = o.receive(out, &f, p, false)
			if v != want {
				t.Fatalf("%v %s: %v, want %v", kind, p, v, want)
			}
		}
		// Before any ordered message the current ordering index is 0.
		recv2 := func(ord, seq uint32, want orderVerdict) {
			t.Helper()
			f, p := sequenced(kind, 1, ord, seq)
			recv(f, p, want)
		}
		recv2(0, 0, orderDelivered)
		recv2(0, 2, orderDelivered)
		recv2(0, 1, orderStale) // older than 2
		recv2(0, 2, orderStale) // equal is not newer
		// Sequenced messages sent after ordered 0 carry ordering index 1;
		// they wait for ordered 0, which has not arrived.
		recv2(1, 1, orderHeld)
		recv2(1, 0, orderHeld)
		f, p := ordered(1, 0)
		recv(f, p, orderDelivered)
		recv2(0, 5, orderStale) // its epoch is over
		recv2(1, 1, orderStale) // delivered from the hold
		recv2(1, 7, orderDelivered)
		want := []string{"s0.0", "s0.2", "o0", "s1.0", "s1.1", "s1.7"}
		if diff := cmp.Diff(want, payloads(out)); diff != "" {
			t.Errorf("%v (-want +got):\n%s", kind, diff)
		}
	}
}

// TestOrderingHeldSequencedOrder: held messages come out by ordering index,
// sequenced ones before the ordered one with their index.
func TestOrderingHeldSequencedOrder(t *testing.T) {
	var o orderingChannels
	var out []recvMessage
	add := func(f rakwire.Frame, p []byte) {
		t.Helper()
		var v orderVerdict
		if out, v = o.receive(out, &f, p, false); v == orderStale || v == orderDuplicate {
			t.Fatalf("%s: %v", p, v)
		}
	}
	// Send order: o0, s1.0, s1.1, o1, s2.0, o2, s3.0
	for _, i := range []int{6, 3, 4, 2, 1, 5} {
		switch i {
		case 1:
			add(sequenced(UnreliableSequenced, 0, 1, 0))
		case 2:
			add(sequenced(UnreliableSequenced, 0, 1, 1))
		case 3:
			add(ordered(0, 1))
		case 4:
			add(sequenced(UnreliableSequenced, 0, 2, 0))
		case 5:
			add(ordered(0, 2))
		case 6:
			add(sequenced(UnreliableSequenced, 0, 3, 0))
		}
	}
	add(ordered(0, 0))
	want := []string{"o0", "s1.0", "s1.1", "o1", "s2.0", "o2", "s3.0"}
	if diff := cmp.Diff(want, payloads(out)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestOrderingLimits(t *testing.T) {
	o := newOrderingChannels(orderLimits{maxAhead: 100, maxHeld: 3, maxHeldBytes: 1000})
	f, _ := ordered(0, 100)
	if v := o.check(&f, 1); v != orderTooFarAhead {
		t.Errorf("100 ahead: %v", v)
	}
	if _, v := o.receive(nil, &f, []byte("x"), false); v != orderTooFarAhead {
		t.Errorf("receive 100 ahead: %v", v)
	}
	for i := uint32(1); i <= 3; i++ {
		f, p := ordered(0, i)
		if v := o.check(&f, len(p)); v != orderHeld {
			t.Fatalf("check %d: %v", i, v)
		}
		o.receive(nil, &f, p, false)
	}
	f, _ = ordered(0, 4)
	if v := o.check(&f, 2); v != orderHoldFull {
		t.Errorf("fourth held: %v", v)
	}
	f, _ = ordered(1, 4)
	if v := o.check(&f, 2); v != orderHeld {
		t.Errorf("other channel: %v", v)
	}
	if v := o.check(&f, 1000); v != orderHoldFull {
		t.Errorf("over the byte limit: %v", v)
	}
	f.OrderingChannel = 32
	if v := o.check(&f, 1); v != orderBadChannel {
		t.Errorf("channel 32: %v", v)
	}
	// Kinds without a channel pass straight through.
	u := rakwire.Frame{Reliability: rakwire.Reliable, OrderingChannel: 200}
	out, v := o.receive(nil, &u, []byte("r"), false)
	if v != orderDelivered || len(out) != 1 || out[0].Channel != 0 {
		t.Errorf("reliable: %v %+v", v, out)
	}
}

// TestOrderingModel sends a stream of ordered and sequenced messages on a
// few channels across the 24-bit wrap, delivers them shuffled and
// duplicated, and checks RakNet's guarantees: every ordered message exactly
// once and in order, sequenced messages never older than one delivered
// before them (in send order), nothing delivered out of its epoch.
func TestOrderingModel(t *testing.T) {
	type sent struct {
		f   rakwire.Frame
		pos int // position in the channel's send order
	}
	for seed := uint64(1); seed <= 10; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		var o orderingChannels
		start := uint32(seqMask - 300)
		for c := range o.ch {
			o.ch[c].next = start
		}
		var nextOrd, nextSeq [4]uint32
		var posCount [4]int
		for c := range nextOrd {
			nextOrd[c] = start
		}
		var all []sent
		for i := 0; i < 3000; i++ {
			c := uint8(rng.IntN(4))
			var f rakwire.Frame
			if rng.IntN(3) == 0 {
				f = rakwire.Frame{Reliability: rakwire.UnreliableSequenced, OrderingChannel: c, OrderingIndex: nextOrd[c], SequencingIndex: nextSeq[c]}
				nextSeq[c]++
			} else {
				f = rakwire.Frame{Reliability: rakwire.ReliableOrdered, OrderingChannel: c, OrderingIndex: nextOrd[c]}
				nextOrd[c] = seqAdd(nextOrd[c], 1)
				nextSeq[c] = 0
			}
			f.Payload = []byte{byte(i), byte(i >> 8)}
			all = append(all, sent{f, posCount[c]})
			posCount[c]++
		}
		// Deliver with local reordering, duplicates, and some sequenced lost.
		var arrivals []sent
		for _, s := range all {
			if s.f.Reliability == rakwire.UnreliableSequenced && rng.IntN(5) == 0 {
				continue
			}
			arrivals = append(arrivals, s)
			if rng.IntN(10) == 0 {
				arrivals = append(arrivals, s)
			}
		}
		for i := range arrivals {
			j := min(len(arrivals)-1, i+rng.IntN(40))
			arrivals[i], arrivals[j] = arrivals[j], arrivals[i]
		}
		posOf := map[[2]byte]int{}
		for _, s := range all {
			posOf[[2]byte{s.f.Payload[0], s.f.Payload[1]}] = s.pos
		}
		var out []recvMessage
		seenOrdered := map[[2]byte]bool{}
		for _, s := range arrivals {
			f := s.f
			if f.Reliability == rakwire.ReliableOrdered && seenOrdered[[2]byte(f.Payload)] {
				continue // the reliable window drops resends before ordering
			}
			var v orderVerdict
			out, v = o.receive(out, &f, f.Payload, false)
			if v == orderTooFarAhead || v == orderBadChannel {
				t.Fatalf("seed %d: %v", seed, v)
			}
			if f.Reliability == rakwire.ReliableOrdered {
				seenOrdered[[2]byte(f.Payload)] = true
			}
		}
		lastPos := [4]int{-1, -1, -1, -1}
		orderedCount := 0
		for _, m := range out {
			pos := posOf[[2]byte(m.Payload)]
			if pos <= lastPos[m.Channel] {
				t.Fatalf("seed %d: channel %d delivered position %d after %d", seed, m.Channel, pos, lastPos[m.Channel])
			}
			lastPos[m.Channel] = pos
			if m.Reliability == ReliableOrdered {
				orderedCount++
			}
		}
		want := 0
		for _, s := range all {
			if s.f.Reliability == rakwire.ReliableOrdered {
				want++
			}
		}
		if orderedCount != want {
			t.Fatalf("seed %d: %d ordered delivered, want %d", seed, orderedCount, want)
		}
		if n, b := o.held(); n != 0 || b != 0 {
			t.Fatalf("seed %d: %d messages (%d bytes) still held", seed, n, b)
		}
	}
}

func BenchmarkOrderingInOrder(b *testing.B) {
	var o orderingChannels
	out := make([]recvMessage, 0, 4)
	f := rakwire.Frame{Reliability: rakwire.ReliableOrdered, OrderingChannel: 2}
	p := []byte("payload")
	b.ReportAllocs()
	for b.Loop() {
		out, _ = o.receive(out[:0], &f, p, false)
		f.OrderingIndex = seqAdd(f.OrderingIndex, 1)
	}
}
