package reliability

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/netrak/netrak/internal/rakwire"
)

// deliverAll feeds datagrams and returns the delivered payloads as strings.
func deliverAll(t *testing.T, p *recvPipeline, dgrams ...[]byte) []string {
	t.Helper()
	var got []string
	var out []recvMessage
	for _, d := range dgrams {
		out, _ = p.receiveDatagram(out[:0], d)
		got = append(got, payloads(out)...)
	}
	return got
}

func TestRecvReceiptKinds(t *testing.T) {
	var p recvPipeline
	// Kinds 5, 6, 7 as a non-original sender might put them on the wire:
	// Append writes the wire kind, so craft the flags byte by hand.
	b := datagram(t, 0)
	b = append(b, 0xa0, 0, 8, 'A')                      // 5: unreliable with receipt
	b = append(b, 0xc0, 0, 8, 0, 0, 0, 'B')             // 6: reliable with receipt
	b = append(b, 0xe0, 0, 8, 1, 0, 0, 0, 0, 0, 2, 'C') // 7: reliable ordered with receipt, channel 2
	out, ok := p.receiveDatagram(nil, b)
	if !ok || len(out) != 3 {
		t.Fatalf("ok=%v, %d messages, drops %+v", ok, len(out), p.drops)
	}
	want := []recvMessage{
		{Reliability: Unreliable, Payload: []byte("A")},
		{Reliability: Reliable, Payload: []byte("B")},
		{Reliability: ReliableOrdered, Channel: 2, Payload: []byte("C")},
	}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestRecvDuplicates(t *testing.T) {
	var p recvPipeline
	f := rakwire.Frame{Reliability: rakwire.ReliableOrdered, ReliableIndex: 0, Payload: []byte("a")}
	u := rakwire.Frame{Reliability: rakwire.Unreliable, Payload: []byte("u")}
	d0 := datagram(t, 0, f, u)
	// The same datagram twice (network duplication), then the reliable frame
	// resent under a new datagram number.
	got := deliverAll(t, &p, d0, d0, datagram(t, 1, f))
	if diff := cmp.Diff([]string{"a", "u"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if p.drops.DuplicateDatagram != 1 || p.drops.DuplicateMessage != 1 {
		t.Errorf("drops %+v", p.drops)
	}
	// Both datagram numbers are acknowledged, once each.
	var a rakwire.Ack
	if _, err := rakwire.ParseAck(ackDatagram(t, &p.acks, false, 1464), &a); err != nil || !cmp.Equal(a.Ranges, []rakwire.Range{{Min: 0, Max: 1}}) {
		t.Errorf("ACK %v, %v", a.Ranges, err)
	}
}

func TestRecvMalformed(t *testing.T) {
	var p recvPipeline
	good := rakwire.Frame{Reliability: rakwire.Reliable, ReliableIndex: 0, Payload: []byte("ok")}
	bad := rakwire.Frame{Reliability: rakwire.ReliableOrdered, ReliableIndex: 1, OrderingChannel: 33, Payload: []byte("bad")}
	d := datagram(t, 0, good, bad)
	d = append(d, 0x40, 0x00) // truncated frame
	got := deliverAll(t, &p, d, []byte{0x84, 0}, []byte{0x01, 2, 3})
	if !cmp.Equal(got, []string{"ok"}) {
		t.Errorf("delivered %v", got)
	}
	if p.drops.InvalidFrame != 1 || p.drops.MalformedDatagram != 3 {
		t.Errorf("drops %+v", p.drops)
	}
}

// TestRecvRefusesWhenFull: a reliable ordered message that cannot be held
// leaves its datagram unacknowledged and unNAKed; once the gap fills, the
// peer's resend is accepted and everything arrives once, in order.
func TestRecvRefusesWhenFull(t *testing.T) {
	p := newRecvPipeline(recvConfig{order: orderLimits{maxHeld: 2}})
	msg := func(i uint32) rakwire.Frame {
		return rakwire.Frame{Reliability: rakwire.ReliableOrdered, ReliableIndex: i, OrderingIndex: i, Payload: []byte{'0' + byte(i)}}
	}
	var out []recvMessage
	var ok bool
	for n, i := range []uint32{1, 2, 3} { // 0 is lost
		out, ok = p.receiveDatagram(out[:0], datagram(t, uint32(n+1), msg(i)))
		if ok != (i != 3) || len(out) != 0 {
			t.Fatalf("message %d: ok=%v, %d delivered", i, ok, len(out))
		}
	}
	if p.drops.OrderingHoldFull != 1 || p.drops.RefusedDatagram != 1 {
		t.Fatalf("drops %+v", p.drops)
	}
	var a rakwire.Ack
	if _, err := rakwire.ParseAck(ackDatagram(t, &p.acks, false, 1464), &a); err != nil || !cmp.Equal(a.Ranges, []rakwire.Range{{Min: 1, Max: 2}}) {
		t.Errorf("ACK %v, %v; want 1..2 (3 refused)", a.Ranges, err)
	}
	if _, err := rakwire.ParseAck(ackDatagram(t, &p.acks, true, 1464), &a); err != nil || !cmp.Equal(a.Ranges, []rakwire.Range{{Min: 0, Max: 0}}) {
		t.Errorf("NAK %v, %v; want 0 only", a.Ranges, err)
	}
	got := deliverAll(t, &p, datagram(t, 4, msg(0)), datagram(t, 5, msg(3)), datagram(t, 6, msg(3)))
	if diff := cmp.Diff([]string{"0", "1", "2", "3"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestRecvSplitOverBudgetRecovers: parts refused for lack of reassembly
// room are accepted when resent after other messages complete.
func TestRecvSplitOverBudgetRecovers(t *testing.T) {
	p := newRecvPipeline(recvConfig{split: splitLimits{maxMessages: 1}})
	m1, m2 := testMessage(3000, 1), testMessage(2000, 2)
	p1 := splitParts(m1, 1000, 1, rakwire.Frame{Reliability: rakwire.ReliableOrdered, ReliableIndex: 0, OrderingIndex: 0})
	p2 := splitParts(m2, 1000, 2, rakwire.Frame{Reliability: rakwire.ReliableOrdered, ReliableIndex: 3, OrderingIndex: 1})
	var out []recvMessage
	var ok bool
	out, _ = p.receiveDatagram(out, datagram(t, 0, p1[0]))
	if out, ok = p.receiveDatagram(out, datagram(t, 1, p2[0])); ok {
		t.Fatal("second split message accepted beyond maxMessages")
	}
	out, _ = p.receiveDatagram(out, datagram(t, 2, p1[1], p1[2]))
	out, _ = p.receiveDatagram(out, datagram(t, 3, p2[0], p2[1])) // the resend
	if len(out) != 2 || !bytes.Equal(out[0].Payload, m1) || !bytes.Equal(out[1].Payload, m2) {
		t.Fatalf("delivered %d messages; drops %+v", len(out), p.drops)
	}
	if !out[0].Owned {
		t.Error("reassembled message not marked owned")
	}
	if p.drops.SplitTooManyMsgs != 1 || p.heldBytes() != 0 {
		t.Errorf("drops %+v, held %d", p.drops, p.heldBytes())
	}
}

// TestRecvStaleSplitSequenced: a reliable sequenced message overtaken by a
// newer one while its parts were arriving is dropped as stale when
// complete, and does not stay in the assembler.
func TestRecvStaleSplitSequenced(t *testing.T) {
	var p recvPipeline
	big := splitParts(testMessage(3000, 5), 1000, 9, rakwire.Frame{Reliability: rakwire.ReliableSequenced, ReliableIndex: 0, SequencingIndex: 5, OrderingChannel: 1})
	newer := rakwire.Frame{Reliability: rakwire.ReliableSequenced, ReliableIndex: 3, SequencingIndex: 6, OrderingChannel: 1, Payload: []byte("newer")}
	got := deliverAll(t, &p, datagram(t, 0, big[0]), datagram(t, 1, newer), datagram(t, 2, big[1], big[2]))
	if !cmp.Equal(got, []string{"newer"}) {
		t.Errorf("delivered %q", got)
	}
	if p.split.pending() != 0 || p.heldBytes() != 0 {
		t.Errorf("%d split messages, %d bytes left behind", p.split.pending(), p.heldBytes())
	}
	if p.drops.StaleSequenced != 1 {
		t.Errorf("drops %+v", p.drops)
	}
}

func TestRecvWrap(t *testing.T) {
	// Datagram numbers, reliable and ordering indexes all cross 2^24.
	p := recvPipeline{}
	p.acks.next = seqMask - 10
	p.rel = newReliableWindow(0)
	p.rel.base = seqMask - 20
	p.order.ch[5].next = seqMask - 30
	var want, got []string
	var out []recvMessage
	for i := uint32(0); i < 100; i++ {
		f := rakwire.Frame{Reliability: rakwire.ReliableOrdered, ReliableIndex: seqAdd(seqMask-20, i), OrderingIndex: seqAdd(seqMask-30, i), OrderingChannel: 5,
			Payload: []byte{byte(i)}}
		want = append(want, string(f.Payload))
		d := datagram(t, seqAdd(seqMask-10, i), f)
		var ok bool
		if out, ok = p.receiveDatagram(out[:0], d); !ok {
			t.Fatalf("datagram %d refused: %+v", i, p.drops)
		}
		got = append(got, payloads(out)...)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if p.drops != (recvDrops{}) {
		t.Errorf("drops %+v", p.drops)
	}
}

func BenchmarkRecvPipelineSmallFrames(b *testing.B) {
	// A full datagram of 32-byte reliable ordered messages, renumbered each
	// time, through the whole receive side.
	var h rakwire.DataHeader
	size := frameHeaderLen(ReliableOrdered, false) + 32
	frames := make([]rakwire.Frame, (MaxMTU-UDPIPOverhead-rakwire.DataHeaderLen)/size)
	for i := range frames {
		frames[i] = rakwire.Frame{Reliability: rakwire.ReliableOrdered, OrderingChannel: 1, Payload: make([]byte, 32)}
	}
	dg := appendDatagram(b, nil, h, frames...)
	var p recvPipeline
	out := make([]recvMessage, 0, len(frames))
	buf := make([]byte, 0, 1464)
	num, idx := uint32(0), uint32(0)
	b.SetBytes(int64(len(dg)))
	b.ReportAllocs()
	for b.Loop() {
		h.Number = num
		for i := range frames {
			frames[i].ReliableIndex, frames[i].OrderingIndex = idx, idx
			idx = seqAdd(idx, 1)
		}
		dg, _ = h.Append(dg[:0]) // as appendDatagram, without its checks
		for i := range frames {
			dg, _ = frames[i].Append(dg)
		}
		var ok bool
		if out, ok = p.receiveDatagram(out[:0], dg); !ok || len(out) != len(frames) {
			b.Fatalf("ok=%v, %d delivered, drops %+v", ok, len(out), p.drops)
		}
		num = seqAdd(num, 1)
		buf, _ = p.acks.appendACK(buf[:0], 1464)
	}
	b.ReportMetric(float64(len(frames)), "msgs/datagram")
}
