package reliability

import (
	"errors"
	"testing"
	"time"

	"github.com/netrak/netrak/internal/rakwire"
)

// Outstanding counts queued messages until they are on the wire, then the
// ones awaiting acknowledgement (reliable kinds and unreliable receipts)
// until the peer acknowledges them; an unreliable message without a
// receipt is done once sent. Idle is both at zero.
func TestEngineOutstanding(t *testing.T) {
	a, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	check := func(when string, q, u int) {
		t.Helper()
		gq, gu := a.Outstanding()
		if gq != q || gu != u || a.Idle() != (q == 0 && u == 0) {
			t.Fatalf("%s: Outstanding() = %d, %d, Idle %v; want %d, %d", when, gq, gu, a.Idle(), q, u)
		}
	}
	check("new", 0, 0)
	mustSend(t, a, testMsg(0, 100), ReliableOrdered, 0, Medium, epoch)
	mustSend(t, a, testMsg(1, 5000), Reliable, 0, Low, epoch) // split
	mustSend(t, a, testMsg(2, 100), Unreliable, 0, Medium, epoch)
	mustSend(t, a, testMsg(3, 100), UnreliableWithAckReceipt, 0, Medium, epoch)
	check("queued", 4, 0)
	ds := drainData(t, a, epoch)
	check("sent", 0, 3)

	// The first datagram is lost: its messages stay unacknowledged.
	now := epoch.Add(time.Millisecond)
	for _, d := range ds[1:] {
		b.Receive(d, now)
	}
	b.FlushACKs(now)
	for {
		out, ok := b.AppendDatagram(nil, now)
		if !ok {
			break
		}
		a.Receive(out, now)
	}
	if _, u := a.Outstanding(); u == 0 || u == 3 {
		t.Fatalf("after a partial ACK: %d unacknowledged, want between 0 and 3", u)
	}
	if a.Idle() {
		t.Fatal("Idle with a datagram lost")
	}

	// The resend after the RTO completes it.
	for !a.Idle() {
		if now.Sub(epoch) > time.Minute {
			t.Fatal("never idle")
		}
		now = a.NextTimeout()
		for _, d := range drainData(t, a, now) {
			b.Receive(d, now)
		}
		b.FlushACKs(now)
		for {
			out, ok := b.AppendDatagram(nil, now)
			if !ok {
				break
			}
			a.Receive(out, now)
		}
	}
	check("acknowledged", 0, 0)
	var kinds []EventKind
	for ev, ok := a.ReadEvent(); ok; ev, ok = a.ReadEvent() {
		kinds = append(kinds, ev.Kind)
	}
	if len(kinds) != 1 {
		t.Fatalf("receipt events %v, want one", kinds)
	}
}

// FlushACKs makes pending acknowledgements go out at the next
// AppendDatagram instead of after the ACK delay; later arrivals wait as
// usual again.
func TestEngineFlushACKs(t *testing.T) {
	e, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	dgram := func(num uint32) []byte {
		return datagram(t, num, rakwire.Frame{Reliability: rakwire.Reliable, ReliableIndex: num, Payload: []byte{byte(num)}})
	}
	ms := func(n float64) time.Time { return epoch.Add(time.Duration(n * float64(time.Millisecond))) }

	e.FlushACKs(ms(0)) // nothing pending: no effect
	if got := e.NextTimeout(); !got.IsZero() {
		t.Fatalf("NextTimeout %v after flushing nothing", got.Sub(epoch))
	}
	e.Receive(dgram(0), ms(1))
	e.Receive(dgram(1), ms(2))
	if b, ok := e.AppendDatagram(nil, ms(2)); ok {
		t.Fatalf("sent % x before the ACK delay", b)
	}
	e.FlushACKs(ms(2))
	if got := e.NextTimeout(); got.After(ms(2)) {
		t.Fatalf("NextTimeout %v after FlushACKs at 2 ms", got.Sub(epoch))
	}
	var a rakwire.Ack
	b, ok := e.AppendDatagram(nil, ms(2))
	if _, err := rakwire.ParseAck(b, &a); !ok || err != nil || a.NAK || len(a.Ranges) != 1 || a.Ranges[0] != (rakwire.Range{Min: 0, Max: 1}) {
		t.Fatalf("after FlushACKs: % x (%v), want an ACK of [0,1]", b, err)
	}

	// The next arrival waits for the ACK delay again.
	e.Receive(dgram(2), ms(3))
	if b, ok := e.AppendDatagram(nil, ms(3)); ok {
		t.Fatalf("sent % x before the ACK delay after a flush", b)
	}
	if got := e.NextTimeout(); !got.Equal(ms(13)) {
		t.Fatalf("NextTimeout %v, want the ACK at 13 ms", got.Sub(epoch))
	}

	// The scheduled repeat of an ACK is flushed too.
	b, ok = e.AppendDatagram(nil, ms(13))
	if _, err := rakwire.ParseAck(b, &a); !ok || err != nil || a.Ranges[len(a.Ranges)-1].Max != 2 {
		t.Fatalf("at 13 ms: % x (%v)", b, err)
	}
	if got := e.NextTimeout(); !got.Equal(ms(13).Add(ackRepeatDelay)) {
		t.Fatalf("NextTimeout %v, want the repeat", got.Sub(epoch))
	}
	e.FlushACKs(ms(14))
	b, ok = e.AppendDatagram(nil, ms(14))
	if _, err := rakwire.ParseAck(b, &a); !ok || err != nil || a.NAK {
		t.Fatalf("flushed repeat: % x (%v)", b, err)
	}
	if got := e.NextTimeout(); !got.IsZero() {
		t.Fatalf("NextTimeout %v with nothing left", got.Sub(epoch))
	}
}

// IdleTimeout declares a silent peer dead even with nothing outstanding;
// any valid datagram from it restarts the clock. Without it an idle
// engine waits for nothing.
func TestEngineIdleTimeout(t *testing.T) {
	sec := func(n float64) time.Time { return epoch.Add(time.Duration(n * float64(time.Second))) }
	off, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	off.FlushACKs(sec(0))
	if off.Dead(sec(3600)) || !off.NextTimeout().IsZero() {
		t.Fatalf("idle engine without IdleTimeout: dead %v, NextTimeout %v", off.Dead(sec(3600)), off.NextTimeout())
	}
	if _, err := New(Config{IdleTimeout: -1}); err == nil {
		t.Fatal("negative IdleTimeout accepted")
	}

	e, err := New(Config{IdleTimeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := e.AppendDatagram(nil, sec(0)); ok {
		t.Fatal("datagram from a fresh engine")
	}
	if got := e.NextTimeout(); !got.Equal(sec(3)) {
		t.Fatalf("NextTimeout %v, want 3 s", got.Sub(epoch))
	}
	e.Receive([]byte{0x80}, sec(1)) // too short for a header: not the peer
	if got := e.NextTimeout(); !got.Equal(sec(3)) {
		t.Fatalf("NextTimeout %v after a malformed datagram, want 3 s", got.Sub(epoch))
	}
	e.Receive(encodeAck(t, rakwire.Ack{Ranges: []rakwire.Range{{Min: 7, Max: 7}}}), sec(2))
	if got := e.NextTimeout(); !got.Equal(sec(5)) {
		t.Fatalf("NextTimeout %v after an ACK at 2 s, want 5 s", got.Sub(epoch))
	}
	if e.Dead(sec(4.9)) {
		t.Fatal("dead before the idle timeout")
	}
	if _, ok := e.AppendDatagram(nil, sec(5)); ok || !e.Dead(sec(5)) {
		t.Fatal("not dead after 3 s of silence")
	}
	if ev, ok := e.ReadEvent(); !ok || ev.Kind != EventDead {
		t.Fatalf("event %v, %v; want EventDead", ev, ok)
	}
	if _, err := e.Send([]byte{1}, Reliable, 0, Medium, sec(5)); err != ErrDead {
		t.Fatalf("Send after death: %v", err)
	}
}

// A frame that does not encode would be a bug in the engine: the
// connection dies of it, where a panic would take its driver down and
// skipping the frame would stall the queue for good.
func TestEngineDiesOnFrameThatDoesNotEncode(t *testing.T) {
	e, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	e.orderingNext[0] = 1 << 24 // past 24 bits, which Send never assigns
	mustSend(t, e, []byte("x"), ReliableOrdered, 0, Medium, epoch)
	if b, ok := e.AppendDatagram(nil, epoch); ok || len(b) != 0 {
		t.Fatalf("sent % x", b)
	}
	if !e.Dead(epoch) {
		t.Fatal("engine alive after a frame that does not encode")
	}
	if ev, ok := e.ReadEvent(); !ok || ev.Kind != EventDead {
		t.Errorf("event %+v, %v; want EventDead", ev, ok)
	}
	if _, err := e.Send([]byte("y"), Reliable, 0, Medium, epoch); !errors.Is(err, ErrDead) {
		t.Errorf("Send after: %v, want ErrDead", err)
	}
}
