package reliability

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/netrak/netrak/internal/rakwire"
)

// flushAll sends every pending ACK (or NAK) in datagrams of at most maxLen
// bytes and returns the ranges they carried, checking each datagram.
func flushAll(t *testing.T, q *ackQueue, nak bool, maxLen int) []rakwire.Range {
	t.Helper()
	var out []rakwire.Range
	for i := 0; (nak && q.pendingNAK() > 0) || (!nak && q.pendingACK() > 0); i++ {
		b := ackDatagram(t, q, nak, maxLen)
		if len(b) == 0 || len(b) > maxLen {
			t.Fatalf("datagram of %d bytes (limit %d)", len(b), maxLen)
		}
		var a rakwire.Ack
		if _, err := rakwire.ParseAck(b, &a); err != nil || a.NAK != nak {
			t.Fatalf("ParseAck: %v (NAK %v)", err, a.NAK)
		}
		out = append(out, a.Ranges...)
		if i > 1e6 {
			t.Fatal("flush does not terminate")
		}
	}
	return out
}

// ackDatagram is q.appendACK, or appendNAK, into a new buffer.
func ackDatagram(tb testing.TB, q *ackQueue, nak bool, maxLen int) []byte {
	tb.Helper()
	appendTo := q.appendACK
	if nak {
		appendTo = q.appendNAK
	}
	b, err := appendTo(nil, maxLen)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func recordAll(t *testing.T, q *ackQueue, nums ...uint32) {
	t.Helper()
	for _, n := range nums {
		if v := q.check(n); v != ackNew {
			t.Fatalf("check(%#x) = %v, want new", n, v)
		}
		q.record(n)
	}
}

func TestAckQueueInOrder(t *testing.T) {
	var q ackQueue
	for n := uint32(0); n < 100; n++ {
		recordAll(t, &q, n)
	}
	if got := flushAll(t, &q, false, 1464); !cmp.Equal(got, []rakwire.Range{{Min: 0, Max: 99}}) {
		t.Errorf("ACK ranges %v", got)
	}
	if q.pendingNAK() != 0 {
		t.Errorf("%d NAK ranges for an in-order stream", q.pendingNAK())
	}
	if ackDatagram(t, &q, false, 1464) != nil {
		t.Error("empty queue wrote an ACK")
	}
}

func TestAckQueueGapsAndLateArrivals(t *testing.T) {
	var q ackQueue
	recordAll(t, &q, 0, 1, 5, 9)
	recordAll(t, &q, 3) // late: fills part of the first gap
	if v := q.check(5); v != ackDuplicate {
		t.Errorf("check(5) = %v, want duplicate", v)
	}
	if v := q.check(3); v != ackDuplicate {
		t.Errorf("check(3) = %v, want duplicate", v)
	}
	if got, want := flushAll(t, &q, false, 1464), []rakwire.Range{{Min: 0, Max: 1}, {Min: 3, Max: 3}, {Min: 5, Max: 5}, {Min: 9, Max: 9}}; !cmp.Equal(got, want) {
		t.Errorf("ACK %v, want %v", got, want)
	}
	if got, want := flushAll(t, &q, true, 1464), []rakwire.Range{{Min: 2, Max: 2}, {Min: 4, Max: 4}, {Min: 6, Max: 8}}; !cmp.Equal(got, want) {
		t.Errorf("NAK %v, want %v", got, want)
	}
	// After the NAK went out, a late datagram is still accepted and ACKed.
	recordAll(t, &q, 7)
	if got := flushAll(t, &q, false, 1464); !cmp.Equal(got, []rakwire.Range{{Min: 7, Max: 7}}) {
		t.Errorf("ACK %v", got)
	}
	if q.pendingNAK() != 0 {
		t.Error("late datagram queued a NAK")
	}
}

func TestAckQueueLimits(t *testing.T) {
	var q ackQueue
	recordAll(t, &q, 0)
	// next is 1: next+ackMaxAhead is refused, one less is the furthest jump.
	if v := q.check(1 + ackMaxAhead); v != ackTooFarAhead {
		t.Errorf("check(next+max) = %v, want too far ahead", v)
	}
	recordAll(t, &q, ackMaxAhead)
	// The whole jump is one NAK range, however long.
	if got := flushAll(t, &q, true, 1464); !cmp.Equal(got, []rakwire.Range{{Min: 1, Max: ackMaxAhead - 1}}) {
		t.Errorf("NAK %v", got)
	}
	newest := uint32(ackMaxAhead)
	if v := q.check(newest + 1 - ackWindow); v != ackNew {
		t.Errorf("oldest remembered number: %v, want new", v)
	}
	if v := q.check(newest - ackWindow); v != ackTooOld {
		t.Errorf("number before the window: %v, want too old", v)
	}
	// Numbers the bitmap slots held before the jump are forgotten, not
	// mistaken for duplicates.
	if v := q.check(newest - 1); v != ackNew {
		t.Errorf("number skipped by the jump: %v, want new", v)
	}
}

func TestAckQueueListFull(t *testing.T) {
	var q ackQueue
	// Every second number: each needs its own ACK range and its own NAK
	// range until the lists fill.
	n := uint32(0)
	for ; q.check(n) == ackNew; n += 2 {
		q.record(n)
		if n > 4*ackMaxPendingRanges {
			t.Fatal("ACK list never filled")
		}
	}
	if q.check(n) != ackListFull || q.pendingACK() != ackMaxPendingRanges {
		t.Fatalf("check = %v with %d pending", q.check(n), q.pendingACK())
	}
	if q.pendingNAK() > ackMaxPendingRanges {
		t.Fatalf("%d NAK ranges pending", q.pendingNAK())
	}
	got := flushAll(t, &q, false, 1464)
	if len(got) != ackMaxPendingRanges {
		t.Fatalf("flushed %d ranges", len(got))
	}
	if q.check(n) != ackNew {
		t.Error("still full after a flush")
	}
}

func TestAckQueueWrap(t *testing.T) {
	q := ackQueue{next: 0xfffff0}
	for n := uint32(0xfffff0); n != 6; n = seqAdd(n, 1) {
		recordAll(t, &q, n)
	}
	if got, want := flushAll(t, &q, false, 1464), []rakwire.Range{{Min: 0, Max: 5}, {Min: 0xfffff0, Max: 0xffffff}}; !cmp.Equal(got, want) {
		t.Errorf("ACK across the wrap %v, want %v", got, want)
	}
	q = ackQueue{next: 0xfffffe}
	recordAll(t, &q, 2)
	if got, want := flushAll(t, &q, true, 1464), []rakwire.Range{{Min: 0, Max: 1}, {Min: 0xfffffe, Max: 0xffffff}}; !cmp.Equal(got, want) {
		t.Errorf("NAK across the wrap %v, want %v", got, want)
	}
	recordAll(t, &q, 0xffffff) // late, before the wrap
	if v := q.check(0xffffff); v != ackDuplicate {
		t.Errorf("check = %v", v)
	}
	if got, want := flushAll(t, &q, false, 1464), []rakwire.Range{{Min: 2, Max: 2}, {Min: 0xffffff, Max: 0xffffff}}; !cmp.Equal(got, want) {
		t.Errorf("ACK %v, want %v", got, want)
	}
}

// checkAscendingRecords walks an encoded ACK or NAK record by record,
// without ParseAck, and fails unless every range starts more than one
// above the previous range's end: ascending and merged, which patched
// RakNet builds (the fix for RakNet issue #102) demand.
func checkAscendingRecords(t *testing.T, b []byte) []rakwire.Range {
	t.Helper()
	if len(b) < 3 || b[0]&rakwire.HeaderValid == 0 {
		t.Fatalf("not an ACK/NAK: % x", b)
	}
	p := 1
	if b[0]&rakwire.HeaderACK != 0 && b[0]&rakwire.HeaderHasBAndAS != 0 {
		p += 4
	}
	count := int(b[p])<<8 | int(b[p+1])
	p += 2
	var rs []rakwire.Range
	for i := 0; i < count; i++ {
		single := b[p] == 1
		r := rakwire.Range{Min: uint32(b[p+1]) | uint32(b[p+2])<<8 | uint32(b[p+3])<<16}
		r.Max = r.Min
		p += 4
		if !single {
			r.Max = uint32(b[p]) | uint32(b[p+1])<<8 | uint32(b[p+2])<<16
			p += 3
		}
		if r.Min > r.Max {
			t.Fatalf("record %d inverted: %v", i, r)
		}
		if n := len(rs); n > 0 && r.Min <= rs[n-1].Max+1 {
			t.Fatalf("record %d %v does not start above %v+1: % x", i, r, rs[n-1], b)
		}
		rs = append(rs, r)
	}
	if p != len(b) {
		t.Fatalf("%d trailing bytes", len(b)-p)
	}
	return rs
}

// TestAckQueueWrapBytes checks the encoded ACK and NAK at the 24-bit wrap
// byte for byte: the run from 0 goes first, then the run up to 0xffffff.
func TestAckQueueWrapBytes(t *testing.T) {
	q := ackQueue{next: 0xfffff0}
	// Received 0xfffff0..0xfffff9, 0xfffffc..0xffffff, 0..3, 6; missing
	// 0xfffffa..0xfffffb and 4..5.
	for n := uint32(0xfffff0); n != 7; n = seqAdd(n, 1) {
		if n == 0xfffffa || n == 0xfffffb || n == 4 || n == 5 {
			continue
		}
		recordAll(t, &q, n)
	}
	ack := ackDatagram(t, &q, false, 1464)
	want := []byte{
		0xc0, 0x00, 0x04,
		0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, // [0, 3]
		0x01, 0x06, 0x00, 0x00, // 6
		0x00, 0xf0, 0xff, 0xff, 0xf9, 0xff, 0xff, // [0xfffff0, 0xfffff9]
		0x00, 0xfc, 0xff, 0xff, 0xff, 0xff, 0xff, // [0xfffffc, 0xffffff]
	}
	if !cmp.Equal(ack, want) {
		t.Errorf("ACK\n got % x\nwant % x", ack, want)
	}
	checkAscendingRecords(t, ack)
	nak := ackDatagram(t, &q, true, 1464)
	want = []byte{
		0xa0, 0x00, 0x02,
		0x00, 0x04, 0x00, 0x00, 0x05, 0x00, 0x00, // [4, 5]
		0x00, 0xfa, 0xff, 0xff, 0xfb, 0xff, 0xff, // [0xfffffa, 0xfffffb]
	}
	if !cmp.Equal(nak, want) {
		t.Errorf("NAK\n got % x\nwant % x", nak, want)
	}
	checkAscendingRecords(t, nak)

	// A datagram that fits only part of the list carries the oldest
	// ranges, still ascending; the rest follow in the next.
	q = ackQueue{next: seqSpace - 10}
	for n := uint32(seqSpace - 10); n != 10; n = seqAdd(n, 2) {
		recordAll(t, &q, n)
	}
	var got []rakwire.Range
	for q.pendingACK() > 0 {
		got = append(got, checkAscendingRecords(t, ackDatagram(t, &q, false, 1+2+4*3))...)
	}
	want2 := []rakwire.Range{{Min: 0xfffff6, Max: 0xfffff6}, {Min: 0xfffff8, Max: 0xfffff8}, {Min: 0xfffffa, Max: 0xfffffa}, {Min: 0, Max: 0}, {Min: 0xfffffc, Max: 0xfffffc}, {Min: 0xfffffe, Max: 0xfffffe}, {Min: 2, Max: 2}, {Min: 4, Max: 4}, {Min: 6, Max: 6}, {Min: 8, Max: 8}}
	if !cmp.Equal(got, want2) {
		t.Errorf("ACKs in 3-record datagrams %v, want %v", got, want2)
	}
}

func TestMergeAscending(t *testing.T) {
	for _, c := range []struct{ x, y, want []rakwire.Range }{
		{nil, nil, nil},
		{[]rakwire.Range{{Min: 1, Max: 2}}, nil, []rakwire.Range{{Min: 1, Max: 2}}},
		{[]rakwire.Range{{Min: 1, Max: 2}, {Min: 8, Max: 9}}, []rakwire.Range{{Min: 3, Max: 3}, {Min: 5, Max: 6}}, []rakwire.Range{{Min: 1, Max: 3}, {Min: 5, Max: 6}, {Min: 8, Max: 9}}},
		{[]rakwire.Range{{Min: 0, Max: 4}}, []rakwire.Range{{Min: 2, Max: 3}}, []rakwire.Range{{Min: 0, Max: 4}}},
		{[]rakwire.Range{{Min: 0, Max: 1}, {Min: 0xfffffe, Max: 0xffffff}}, []rakwire.Range{{Min: 2, Max: 5}, {Min: 0xfffff0, Max: 0xfffffd}}, []rakwire.Range{{Min: 0, Max: 5}, {Min: 0xfffff0, Max: 0xffffff}}},
	} {
		got := mergeAscending(nil, c.x, c.y)
		if !cmp.Equal(got, c.want, cmpopts.EquateEmpty()) {
			t.Errorf("mergeAscending(%v, %v) = %v, want %v", c.x, c.y, got, c.want)
		}
	}
}

func TestAckQueueMTU(t *testing.T) {
	var q ackQueue
	for n := uint32(0); n < 3000; n += 2 {
		recordAll(t, &q, n)
	}
	const small = 400 - 28
	got := flushAll(t, &q, false, small)
	if len(got) != 1500 {
		t.Fatalf("%d ranges", len(got))
	}
	for i, r := range got {
		if r.Min != uint32(2*i) || r.Max != r.Min {
			t.Fatalf("range %d = %v", i, r)
		}
	}
}

// TestAckQueueModel checks the queue against a plain set under random
// arrival orders: every datagram is ACKed exactly once, duplicates are
// refused, and a NAK never names a datagram received before it was sent.
func TestAckQueueModel(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		rng := rand.New(rand.NewPCG(seed, 99))
		start := uint32(rng.IntN(seqSpace))
		q := ackQueue{next: start}
		received := map[uint32]bool{}
		acked := map[uint32]int{}
		sent := uint32(0) // numbers start..start+sent-1 exist
		var pending []uint32
		for step := 0; step < 15000; step++ {
			switch r := rng.IntN(100); {
			case r < 60: // a new datagram, maybe reordered
				pending = append(pending, seqAdd(start, sent))
				sent++
				if rng.IntN(10) == 0 { // lost
					pending = pending[:len(pending)-1]
				}
			case r < 90 && len(pending) > 0: // deliver one, not always the oldest
				i := rng.IntN(min(len(pending), 8))
				n := pending[i]
				pending = append(pending[:i], pending[i+1:]...)
				if rng.IntN(20) == 0 {
					pending = append(pending, n) // duplicated
				}
				v := q.check(n)
				switch {
				case received[n] && v != ackDuplicate:
					t.Fatalf("seed %d: duplicate %#x: %v", seed, n, v)
				case !received[n] && v != ackNew:
					t.Fatalf("seed %d: new %#x: %v", seed, n, v)
				}
				if v == ackNew {
					q.record(n)
					received[n] = true
				}
			case r < 95:
				for _, rg := range flushAll(t, &q, false, 1464) {
					for n := rg.Min; ; n++ {
						acked[n]++
						if n == rg.Max {
							break
						}
					}
				}
			default:
				for _, rg := range flushAll(t, &q, true, 1464) {
					for n := rg.Min; ; n++ {
						if received[n] {
							t.Fatalf("seed %d: NAK for received %#x", seed, n)
						}
						if n == rg.Max {
							break
						}
					}
				}
			}
		}
		for _, rg := range flushAll(t, &q, false, 1464) {
			for n := rg.Min; ; n++ {
				acked[n]++
				if n == rg.Max {
					break
				}
			}
		}
		want := map[uint32]int{}
		for n := range received {
			want[n] = 1
		}
		if diff := cmp.Diff(want, acked, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("seed %d: ACKed (-want +got):\n%s", seed, diff)
		}
	}
}

func BenchmarkAckQueueRecordFlush(b *testing.B) {
	var q ackQueue
	buf := make([]byte, 0, 1464)
	n := uint32(0)
	b.ReportAllocs()
	for b.Loop() {
		// 32 datagrams, one lost, then an ACK and a NAK.
		for i := 0; i < 32; i++ {
			if i != 7 {
				q.record(n)
			}
			n = seqAdd(n, 1)
		}
		buf, _ = q.appendACK(buf[:0], 1464)
		buf, _ = q.appendNAK(buf[:0], 1464)
	}
}
