package reliability

import (
	"testing"
	"time"

	"github.com/netrak/netrak/internal/rakwire"
)

// drainData collects the data datagrams the engine hands out now, and
// fails on any datagram longer than the engine's limit.
func drainData(t *testing.T, e *Engine, now time.Time) [][]byte {
	t.Helper()
	var out [][]byte
	for {
		b, ok := e.AppendDatagram(nil, now)
		if !ok {
			return out
		}
		if len(b) > e.MaxDatagramSize() {
			t.Fatalf("%d-byte datagram, limit %d", len(b), e.MaxDatagramSize())
		}
		if rakwire.ClassifyDatagram(b) == rakwire.DatagramData {
			out = append(out, b)
		}
	}
}

// The data header's flags mean what they mean to the original library:
// 0x84 opens a burst in slow start and 0x8c continues it, as in the
// capture; out of slow start the needs-B-and-AS bit goes.
func TestEngineDataHeaderFlags(t *testing.T) {
	e, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	now := epoch
	for i := range 3 {
		mustSend(t, e, testMsg(uint32(i), 1000), ReliableOrdered, 0, Medium, now)
	}
	ds := drainData(t, e, now)
	if len(ds) != 3 {
		t.Fatalf("%d datagrams, want 3", len(ds))
	}
	for i, want := range []byte{0x84, 0x8c, 0x8c} {
		if ds[i][0] != want {
			t.Errorf("datagram %d header %#x, want %#x", i, ds[i][0], want)
		}
	}
	// The queue ran dry: the next datagram opens a new burst.
	mustSend(t, e, []byte("x"), Reliable, 0, Medium, now)
	if ds := drainData(t, e, now); len(ds) != 1 || ds[0][0] != 0x84 {
		t.Fatalf("new burst: %x", ds)
	}
	e.cc.ssthresh = e.cc.cwnd // congestion avoidance
	mustSend(t, e, testMsg(9, 1000), Reliable, 0, Medium, now)
	mustSend(t, e, testMsg(10, 1000), Reliable, 0, Medium, now)
	ds = drainData(t, e, now)
	if len(ds) != 2 || ds[0][0] != 0x80 || ds[1][0] != 0x88 {
		t.Errorf("out of slow start: headers %#x %#x, want 0x80 0x88", ds[0][0], ds[1][0])
	}
}

// Many small messages share datagrams, packed up to the MTU, at every MTU
// the engine allows.
func TestEnginePacksFrames(t *testing.T) {
	for _, mtu := range []int{MinMTU, 576, 1200 + UDPIPOverhead, MaxMTU} {
		e, err := New(Config{MTU: mtu})
		if err != nil {
			t.Fatal(err)
		}
		const size = 40
		for i := range 200 {
			mustSend(t, e, testMsg(uint32(i), size), ReliableOrdered, 3, Medium, epoch)
		}
		// The congestion window lets a few datagrams go at a time:
		// acknowledge them all and go on.
		var ds [][]byte
		for now := epoch; e.Stats().QueuedMessages > 0; now = now.Add(10 * time.Millisecond) {
			ds = append(ds, drainData(t, e, now)...)
			e.Receive(encodeAck(t, rakwire.Ack{Ranges: []rakwire.Range{{Min: 0, Max: seqMask}}}), now)
		}
		per := (e.MaxDatagramSize() - rakwire.DataHeaderLen) / (frameHeaderLen(ReliableOrdered, false) + size)
		frames := 0
		for i, d := range ds {
			_, r, err := parseDataDatagram(d)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			var f rakwire.Frame
			for r.Next(&f) == nil {
				n++
			}
			if i < len(ds)-1 && n != per {
				t.Errorf("MTU %d: datagram %d holds %d frames, want %d", mtu, i, n, per)
			}
			frames += n
		}
		if frames != 200 {
			t.Errorf("MTU %d: %d frames for 200 messages", mtu, frames)
		}
	}
}

// An ACK carrying the AS float (header 0xe0) acknowledges like any other.
func TestEngineAckWithAS(t *testing.T) {
	e, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	mustSend(t, e, []byte("hi"), ReliableWithAckReceipt, 0, Medium, epoch)
	if len(drainData(t, e, epoch)) != 1 {
		t.Fatal("nothing sent")
	}
	ack := encodeAck(t, rakwire.Ack{HasAS: true, AS: 12345, Ranges: []rakwire.Range{{Min: 0, Max: 0}}})
	if ack[0] != 0xe0 {
		t.Fatalf("header %#x", ack[0])
	}
	e.Receive(ack, epoch.Add(30*time.Millisecond))
	if ev, ok := e.ReadEvent(); !ok || ev.Kind != EventAcked {
		t.Errorf("event %+v, %v; want acked", ev, ok)
	}
	if s := e.Stats(); s.ACKsReceived != 1 || s.InFlightDatagrams != 0 || s.SmoothedRTT != 30*time.Millisecond {
		t.Errorf("stats after ACK: %+v", s)
	}
}

// A split message of an unreliable kind goes on the wire as the matching
// reliable kind, so its parts are resent after a loss and it arrives
// whole; an UnreliableWithAckReceipt one then reports acked, never lost.
func TestEngineSplitUpgrade(t *testing.T) {
	for _, c := range []struct{ kind, wire Reliability }{
		{Unreliable, Reliable},
		{UnreliableSequenced, ReliableSequenced},
		{UnreliableWithAckReceipt, Reliable},
	} {
		t.Run(c.kind.String(), func(t *testing.T) {
			p := newNetPair(t, 12, Config{}, impair{delay: 10 * time.Millisecond})
			var got []Message
			p.onRecv = func(side int, m Message) {
				checkMsg(t, m.Payload, 1, 5000)
				got = append(got, m)
			}
			receipt := mustSend(t, p.e[0], testMsg(1, 5000), c.kind, 2, Medium, p.now)
			ds := drainData(t, p.e[0], p.now)
			if len(ds) < 4 {
				t.Fatalf("%d datagrams for a 5000-byte message", len(ds))
			}
			for _, d := range ds {
				_, r, _ := parseDataDatagram(d)
				var f rakwire.Frame
				if err := r.Next(&f); err != nil || !f.Split || f.Reliability != kind(c.wire) {
					t.Fatalf("frame %+v, %v; want split %v", f, err, c.wire)
				}
			}
			// The first part is lost; the rest arrive.
			for _, d := range ds[1:] {
				p.e[1].Receive(d, p.now)
			}
			p.run(time.Minute, func() bool { return len(got) == 1 })
			if got[0].Reliability != c.wire {
				t.Errorf("delivered as %v, want %v", got[0].Reliability, c.wire)
			}
			if s := p.e[0].Stats(); s.Resends == 0 {
				t.Error("the lost part was not resent")
			}
			if c.kind.WantsReceipt() {
				p.run(time.Minute, func() bool { return p.e[0].Stats().HeldSendBytes == 0 })
				if ev, ok := p.e[0].ReadEvent(); !ok || ev != (Event{Kind: EventAcked, Receipt: receipt}) {
					t.Errorf("event %+v, %v; want acked %d", ev, ok, receipt)
				}
			}
		})
	}
}

// A bulk transfer never leaves in bursts longer than the pacer allows:
// at any one instant at most pacingBurstDatagrams data datagrams go out,
// however large the congestion window has grown.
func TestEnginePacingBoundsBursts(t *testing.T) {
	p := newNetPair(t, 14, Config{}, impair{delay: 25 * time.Millisecond})
	got := 0
	p.onRecv = func(side int, m Message) { got++ }
	for i := range 8 {
		mustSend(t, p.e[0], testMsg(uint32(i), 1<<20), ReliableOrdered, 0, Low, p.now)
	}
	last, burst, maxCwnd := 0, 0, 0
	p.run(time.Hour, func() bool {
		burst = max(burst, p.sent[0]-last)
		last = p.sent[0]
		maxCwnd = max(maxCwnd, p.e[0].Stats().CongestionWindow)
		return got == 8
	})
	if burst > pacingBurstDatagrams {
		t.Errorf("%d data datagrams at one instant, want at most %d", burst, pacingBurstDatagrams)
	}
	if maxCwnd < 4*pacingBurstDatagrams*p.e[0].MaxDatagramSize() {
		t.Errorf("window only reached %d bytes; the test does not exercise pacing", maxCwnd)
	}
	t.Logf("longest burst %d datagrams, window up to %d bytes, %v simulated", burst, maxCwnd, p.now.Sub(epoch))
}

// A NAK makes the sender resend the missing frames at once, in a new
// datagram, under the same reliable message index; before any ACK it
// waits for nothing.
func TestEngineResendOnNAK(t *testing.T) {
	e, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		mustSend(t, e, testMsg(uint32(i), 1200), Reliable, 0, Medium, epoch)
	}
	ds := drainData(t, e, epoch)
	if len(ds) != 3 {
		t.Fatalf("%d datagrams", len(ds))
	}
	now := epoch.Add(40 * time.Millisecond) // far below the RTO
	e.Receive(encodeAck(t, rakwire.Ack{Ranges: []rakwire.Range{{Min: 0, Max: 0}, {Min: 2, Max: 2}}}), now)
	e.Receive(encodeAck(t, rakwire.Ack{NAK: true, Ranges: []rakwire.Range{{Min: 1, Max: 1}}}), now)
	re := drainData(t, e, now)
	if len(re) != 1 {
		t.Fatalf("%d datagrams after the NAK, want the resend", len(re))
	}
	h, r, _ := parseDataDatagram(re[0])
	var f rakwire.Frame
	if err := r.Next(&f); err != nil {
		t.Fatal(err)
	}
	if h.Number != 3 || f.ReliableIndex != 1 {
		t.Errorf("resent as datagram %d, reliable index %d; want 3 and 1", h.Number, f.ReliableIndex)
	}
	checkMsg(t, f.Payload, 1, 1200)
	if s := e.Stats(); s.Resends != 1 || s.NAKsReceived != 1 || s.DatagramsLost != 1 {
		t.Errorf("stats %+v", s)
	}
}

// Received datagrams are acknowledged once the ACK delay (10 ms) has
// passed since the first of them, in one coalesced ACK; a gap is NAKed
// after twice the ACK delay, unless it fills first; an ACK not carried
// again by a fresh one is repeated on its own after ackRepeatDelay.
func TestEngineAckTiming(t *testing.T) {
	e, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	dgram := func(num uint32) []byte { return dataDatagram(t, num) }
	ms := func(n float64) time.Time { return epoch.Add(time.Duration(n * float64(time.Millisecond))) }
	for i, at := range []float64{0, 3, 6} {
		e.Receive(dgram(uint32(i)), ms(at))
	}
	e.Receive(dgram(5), ms(7)) // 3 and 4 missing
	e.Receive(dgram(3), ms(8)) // 3 was only late
	if got := e.NextTimeout(); !got.Equal(ms(10)) {
		t.Fatalf("NextTimeout %v, want the ACK at 10 ms", got.Sub(epoch))
	}
	if b, ok := e.AppendDatagram(nil, ms(9.9)); ok {
		t.Fatalf("sent % x before the ACK delay", b)
	}
	var a rakwire.Ack
	b, ok := e.AppendDatagram(nil, ms(10))
	if _, err := rakwire.ParseAck(b, &a); !ok || err != nil || a.NAK || len(a.Ranges) != 2 || a.Ranges[0] != (rakwire.Range{Min: 0, Max: 3}) || a.Ranges[1] != (rakwire.Range{Min: 5, Max: 5}) {
		t.Fatalf("at 10 ms: % x (%v), want one ACK of [0,3] [5,5]", b, err)
	}
	if b, ok := e.AppendDatagram(nil, ms(10)); ok {
		t.Fatalf("second datagram % x", b)
	}
	// The gap (4) opened at 7 ms: NAKed at 27 ms.
	if got := e.NextTimeout(); !got.Equal(ms(27)) {
		t.Fatalf("NextTimeout %v, want the NAK at 27 ms", got.Sub(epoch))
	}
	b, ok = e.AppendDatagram(nil, ms(27))
	if _, err := rakwire.ParseAck(b, &a); !ok || err != nil || !a.NAK || len(a.Ranges) != 1 || a.Ranges[0] != (rakwire.Range{Min: 4, Max: 4}) {
		t.Fatalf("at 27 ms: % x (%v), want a NAK of 4", b, err)
	}
	// No fresh ACK came: the last one is repeated on its own at 50 ms.
	if got := e.NextTimeout(); !got.Equal(ms(10).Add(ackRepeatDelay)) {
		t.Fatalf("NextTimeout %v, want the repeat at %v", got.Sub(epoch), (10*time.Millisecond + ackRepeatDelay))
	}
	b, ok = e.AppendDatagram(nil, ms(10).Add(ackRepeatDelay))
	if _, err := rakwire.ParseAck(b, &a); !ok || err != nil || a.NAK || len(a.Ranges) != 2 || a.Ranges[0] != (rakwire.Range{Min: 0, Max: 3}) {
		t.Fatalf("repeat: % x (%v)", b, err)
	}
	if got := e.NextTimeout(); !got.IsZero() {
		t.Errorf("NextTimeout %v with nothing left to do", got.Sub(epoch))
	}
	if s := e.Stats(); s.ACKsSent != 2 || s.NAKsSent != 1 {
		t.Errorf("ACKs %d NAKs %d sent", s.ACKsSent, s.NAKsSent)
	}
}
