package reliability

import (
	"testing"
	"time"

	"github.com/netrak/netrak/internal/rakwire"
)

func TestReorderTrackerAllowance(t *testing.T) {
	const floor = 20 * time.Millisecond
	var r reorderTracker
	t0 := epoch
	if got := r.allowance(floor, 0, t0); got != floor {
		t.Errorf("no reordering seen: %v, want the floor %v", got, floor)
	}
	// 0, 1 and 3 arrive; 2 arrives 28 ms after 3 did.
	r.arrived(0, 0, t0)
	r.arrived(1, 1, t0.Add(time.Millisecond))
	r.arrived(3, 2, t0.Add(2*time.Millisecond))
	r.arrived(2, 4, t0.Add(30*time.Millisecond))
	if r.late != 28*time.Millisecond {
		t.Fatalf("lateness %v, want 28ms", r.late)
	}
	now := t0.Add(30 * time.Millisecond)
	if got, want := r.allowance(floor, 0, now), 28*time.Millisecond+28*time.Millisecond/8+time.Millisecond; got != want {
		t.Errorf("allowance %v, want %v", got, want)
	}
	if got := r.allowance(floor, 25*time.Millisecond, now); got != 25*time.Millisecond {
		t.Errorf("allowance with SRTT 25ms: %v, want the SRTT", got)
	}
	// A smaller lateness does not lower it; 10 s without more halves it.
	r.arrived(5, 4, now)
	r.arrived(4, 6, now.Add(5*time.Millisecond))
	if r.late != 28*time.Millisecond {
		t.Errorf("lateness %v after a smaller sample, want 28ms", r.late)
	}
	if got := r.allowance(floor, 0, now.Add(reorderHold)); got != floor || r.late != 14*time.Millisecond {
		t.Errorf("after the hold: allowance %v (late %v), want the floor (14ms)", got, r.late)
	}
	// Lateness is capped.
	r.arrived(7, 6, now)
	r.arrived(6, 8, now.Add(time.Second))
	if got := r.allowance(floor, 0, now.Add(time.Second)); got != maxNAKDelay {
		t.Errorf("allowance after 1 s lateness: %v, want the cap %v", got, maxNAKDelay)
	}
}

// dataDatagram returns a data datagram numbered num with one unreliable
// frame.
func dataDatagram(tb testing.TB, num uint32) []byte {
	return datagram(tb, num, rakwire.Frame{Reliability: rakwire.Unreliable, Payload: []byte{byte(num)}})
}

// drainNAKs runs e's output at now and returns the NAK ranges it sent.
func drainNAKs(t *testing.T, e *Engine, now time.Time) []rakwire.Range {
	t.Helper()
	var got []rakwire.Range
	for {
		b, ok := e.AppendDatagram(nil, now)
		if !ok {
			return got
		}
		if rakwire.ClassifyDatagram(b) == rakwire.DatagramNAK {
			var a rakwire.Ack
			if _, err := rakwire.ParseAck(b, &a); err != nil {
				t.Fatal(err)
			}
			got = append(got, a.Ranges...)
		}
	}
}

// A receiver NAKs each gap once it has been open for the reordering
// allowance, which it raises after seeing a datagram arrive late, so that
// a path that reorders stops causing resends; gaps opened later wait their
// own turn.
func TestEngineNAKAdaptsToReordering(t *testing.T) {
	t.Run("from 0", func(t *testing.T) { testNAKAdapts(t, 0) })
	// Across the 24-bit wrap, after a long run without gaps.
	t.Run("across the wrap", func(t *testing.T) { testNAKAdapts(t, seqSpace-5) })
}

func testNAKAdapts(t *testing.T, base uint32) {
	e, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	now := epoch
	step := func(d time.Duration) []rakwire.Range {
		now = now.Add(d)
		return drainNAKs(t, e, now)
	}
	// Walk the receiver up to base in steps it accepts, each step a gap
	// that is NAKed, then a run of datagrams without gaps.
	for n := uint32(0); n < base-min(base, 2048); n += 20000 {
		e.Receive(dataDatagram(t, n), now)
		step(time.Second)
	}
	for n := max(base, 2048) - 2048; n < base; n++ {
		e.Receive(dataDatagram(t, n), now)
	}
	step(time.Second)
	naks0 := e.Stats().NAKsSent
	if d := e.Stats().Drops.DatagramOutOfWindow; d != 0 || e.rx.pipe.acks.next != base {
		t.Fatalf("setup: next %d, want %d; %d dropped", e.rx.pipe.acks.next, base, d)
	}
	num := func(k uint32) uint32 { return seqAdd(base, k) }
	recv := func(k uint32) { e.Receive(dataDatagram(t, num(k)), now) }
	nak := func(k uint32) rakwire.Range { return rakwire.Range{Min: num(k), Max: num(k)} }

	// 1 overtakes 0 by 5 ms: inside the 20 ms floor, nothing is NAKed.
	recv(1)
	step(5 * time.Millisecond)
	recv(0)
	if got := step(30 * time.Millisecond); len(got) != 0 {
		t.Fatalf("NAKed %v for a datagram 5 ms late", got)
	}
	// 3 overtakes 2 by 40 ms: 2 is NAKed at 20 ms (the peer would resend
	// it for nothing), and the receiver learns the path reorders by 40 ms.
	recv(3)
	if got := step(21 * time.Millisecond); len(got) != 1 || got[0] != nak(2) {
		t.Fatalf("NAKs %v, want [2 2] after 21 ms", got)
	}
	step(19 * time.Millisecond)
	recv(2)
	// Now a 40 ms reordering passes unreported...
	recv(5)
	if got := step(40 * time.Millisecond); len(got) != 0 {
		t.Fatalf("NAKed %v after learning the path reorders by 40 ms", got)
	}
	recv(4)
	// ...and a real loss is reported after the allowance (about 46 ms), a
	// gap opened 30 ms later only after its own.
	recv(7)
	if got := step(30 * time.Millisecond); len(got) != 0 {
		t.Fatalf("NAKed %v at 30 ms", got)
	}
	recv(9)
	if got := step(17 * time.Millisecond); len(got) != 1 || got[0] != nak(6) {
		t.Fatalf("NAKs %v at 47 ms, want only [6 6]", got)
	}
	if got := step(30 * time.Millisecond); len(got) != 1 || got[0] != nak(8) {
		t.Fatalf("NAKs %v for the second gap, want [8 8]", got)
	}
	if n := e.Stats().NAKsSent - naks0; n != 3 {
		t.Errorf("%d NAKs sent, want 3", n)
	}
}

// A sender whose peer NAKs datagrams that then arrive after all (a peer
// that reports gaps at once, on a path that reorders) counts them as
// spurious losses, and once that is the rule rather than the exception it
// waits out the reordering before resending a NAKed datagram.
func TestEngineWaitsOutPrematureNAKs(t *testing.T) {
	e, err := New(Config{RTOMin: time.Second, InitialRTO: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	now := epoch
	for i := range 12 {
		mustSend(t, e, testMsg(uint32(i), 1000), Reliable, 0, Medium, now)
	}
	drain := func() {
		for {
			if _, ok := e.AppendDatagram(nil, now); !ok {
				return
			}
		}
	}
	drain()
	nak := func(n uint32) {
		e.Receive(encodeAck(t, rakwire.Ack{NAK: true, Ranges: []rakwire.Range{{Min: n, Max: n}}}), now)
	}
	ack := func(n uint32) { e.Receive(encodeAck(t, rakwire.Ack{Ranges: []rakwire.Range{{Min: n, Max: n}}}), now) }
	// Six NAKs, each followed 5 ms later by the datagram's ACK: each is
	// resent at once and then found spurious.
	for n := uint32(0); n < 6; n++ {
		nak(n)
		drain()
		now = now.Add(5 * time.Millisecond)
		ack(n)
		drain()
	}
	s := e.Stats()
	if s.SpuriousLosses != 6 || s.Resends != 6 {
		t.Fatalf("spurious %d, resends %d; want 6 and 6", s.SpuriousLosses, s.Resends)
	}
	// Now a NAK waits: the ACK that follows 5 ms later cancels the resend.
	nak(6)
	drain()
	if got := e.Stats().Resends; got != 6 {
		t.Fatalf("resent at once after six premature NAKs (%d resends)", got)
	}
	now = now.Add(5 * time.Millisecond)
	ack(6)
	drain()
	if s := e.Stats(); s.Resends != 6 || s.DatagramsLost != 6 {
		t.Fatalf("resends %d, lost %d after the late ACK; want 6 and 6", s.Resends, s.DatagramsLost)
	}
	// A datagram that stays missing is resent once the wait is over.
	nak(7)
	drain()
	if next := e.NextTimeout(); !next.After(now) || next.Sub(now) > 20*time.Millisecond {
		t.Fatalf("next timeout in %v, want the NAK wait (under 20 ms)", next.Sub(now))
	}
	now = e.NextTimeout()
	drain()
	if s := e.Stats(); s.Resends != 7 || s.DatagramsLost != 7 {
		t.Errorf("resends %d, lost %d after the wait; want 7 and 7", s.Resends, s.DatagramsLost)
	}
}

func TestCongestionUndoSpuriousCut(t *testing.T) {
	const mss = 1000
	c := newCongestionController(mss)
	w := c.cwnd
	if !c.onLoss(7, epoch, epoch, true) || c.cwnd != w/2 {
		t.Fatalf("no cut: %d", c.cwnd)
	}
	c.onSpurious(8) // not the datagram that caused the cut
	if c.cwnd != w/2 {
		t.Fatalf("undone by another datagram: %d", c.cwnd)
	}
	c.onSpurious(7)
	if c.cwnd != w || !c.inSlowStart() || c.recovering {
		t.Errorf("after undo: cwnd %d ssthresh %d recovering %v", c.cwnd, c.ssthresh, c.recovering)
	}
}
