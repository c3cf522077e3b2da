package endpoint

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/netrak/netrak/reliability"
)

var (
	errLost   = errors.New("test: lost")
	errPeer   = errors.New("test: peer closed")
	testEpoch = time.Unix(1_000_000, 0)
)

// testProto is a protocol with one message of its own (0xff) and a fixed
// linger, recording what the Core asks of it.
type testProto struct {
	linger time.Duration
	polls  int
}

func (p *testProto) Intercept(m reliability.Message, _ time.Time) bool {
	return len(m.Payload) == 1 && m.Payload[0] == 0xff
}
func (p *testProto) Poll(time.Time)        { p.polls++ }
func (p *testProto) NextWake() time.Time   { return time.Time{} }
func (p *testProto) Linger() time.Duration { return p.linger }

// pair is two Cores wired back to back with a perfect link that the
// test pumps by hand.
type pair struct {
	a, b   *Core
	pa, pb *testProto
	now    time.Time
}

func newPair(t *testing.T, goodbye []byte, receiveBuffer int) *pair {
	t.Helper()
	p := &pair{now: testEpoch, pa: &testProto{linger: 200 * time.Millisecond}, pb: &testProto{linger: 200 * time.Millisecond}}
	mk := func(proto *testProto) *Core {
		c, err := NewCore(Config{
			Engine: reliability.Config{MTU: 1228}, DeadTimeout: 5 * time.Second, ReceiveBuffer: receiveBuffer,
			Goodbye: goodbye, ErrLost: errLost, ErrPeerClosed: errPeer,
		}, p.now)
		if err != nil {
			t.Fatal(err)
		}
		c.SetProtocol(proto)
		c.MarkUp()
		return c
	}
	p.a, p.b = mk(p.pa), mk(p.pb)
	return p
}

// pump exchanges datagrams until neither side has anything due, then
// advances the clock by step.
func (p *pair) pump(step time.Duration) {
	for moved := true; moved; {
		moved = false
		p.a.Poll(p.now, nil, func(d []byte) { moved = true; p.b.Receive(d, p.now) })
		p.b.Poll(p.now, nil, func(d []byte) { moved = true; p.a.Receive(d, p.now) })
	}
	p.now = p.now.Add(step)
}

func TestCoreDeliversUserMessagesOnly(t *testing.T) {
	p := newPair(t, nil, 1<<20)
	p.a.Engine().Send([]byte("one"), reliability.ReliableOrdered, 0, reliability.Medium, p.now)
	p.a.SendInternal([]byte{0xff}, reliability.Reliable, p.now)
	p.a.Engine().Send([]byte("two"), reliability.ReliableOrdered, 0, reliability.Medium, p.now)
	p.pump(10 * time.Millisecond)
	for _, want := range []string{"one", "two"} {
		if !p.b.HasMessage() {
			t.Fatalf("no message %q", want)
		}
		if m := p.b.ReadMessage(); string(m.Data) != want {
			t.Fatalf("read %q, want %q", m.Data, want)
		}
	}
	if p.b.HasMessage() {
		t.Fatal("the protocol's own message reached the reader")
	}
}

// TestCoreReceiveBuffer: past ReceiveBuffer bytes the Core leaves
// messages in the engine; reading makes room and Drain brings them in.
func TestCoreReceiveBuffer(t *testing.T) {
	p := newPair(t, nil, 1000)
	msg := bytes.Repeat([]byte{1}, 600)
	for range 3 {
		p.a.Engine().Send(msg, reliability.ReliableOrdered, 0, reliability.Medium, p.now)
	}
	p.pump(10 * time.Millisecond)
	if q := p.b.Queued(); q != 1200 {
		t.Fatalf("queued %d bytes, want 1200 (two messages: the second crossed the bound)", q)
	}
	buf := make([]byte, 1000)
	for i := range 3 {
		if !p.b.HasMessage() {
			t.Fatalf("message %d missing", i)
		}
		if m := p.b.ReadMessageInto(buf); len(m.Data) != 600 {
			t.Fatalf("message %d: %d bytes", i, len(m.Data))
		}
		p.b.Drain(p.now)
	}
}

func TestCorePartialRead(t *testing.T) {
	p := newPair(t, nil, 1<<20)
	p.a.Engine().Send([]byte("abcdefgh"), reliability.ReliableOrdered, 0, reliability.Medium, p.now)
	p.pump(10 * time.Millisecond)
	b := make([]byte, 3)
	if n := p.b.Read(b); string(b[:n]) != "abc" {
		t.Fatalf("first read %q", b[:n])
	}
	if m := p.b.ReadMessage(); string(m.Data) != "defgh" {
		t.Fatalf("rest %q", m.Data)
	}
	if p.b.Queued() != 0 {
		t.Fatalf("queued %d after reading everything", p.b.Queued())
	}
}

// TestCoreCloseWithGoodbye: Close sends the goodbye after the data, the
// peer lingers, and the closing side ends once everything is
// acknowledged.
func TestCoreCloseWithGoodbye(t *testing.T) {
	p := newPair(t, []byte{0xff}, 1<<20)
	// The goodbye is the protocol's own message: b's Intercept must mark
	// the peer closing, as raknet's does.
	p.pb = &testProto{linger: 200 * time.Millisecond}
	p.b.SetProtocol(goodbyeProto{p.b, p.pb})
	p.a.Engine().Send([]byte("last words"), reliability.ReliableOrdered, 0, reliability.Medium, p.now)
	p.a.Close(p.now, time.Second)
	for range 10 {
		p.pump(10 * time.Millisecond)
	}
	if !p.a.Ended() || p.a.Err() != nil {
		t.Fatalf("closing side: ended %v err %v", p.a.Ended(), p.a.Err())
	}
	if !p.b.PeerClosed() || !p.b.Released() {
		t.Fatal("the peer did not see the goodbye")
	}
	if m := p.b.ReadMessage(); string(m.Data) != "last words" {
		t.Fatalf("peer read %q", m.Data)
	}
	if p.b.Ended() {
		t.Fatal("the peer ended before its linger")
	}
	for range 30 {
		p.pump(10 * time.Millisecond)
	}
	if !p.b.Ended() || !errors.Is(p.b.Err(), errPeer) {
		t.Fatalf("peer after the linger: ended %v err %v", p.b.Ended(), p.b.Err())
	}
}

// goodbyeProto recognises the goodbye (0xff) as the peer closing.
type goodbyeProto struct {
	c *Core
	*testProto
}

func (g goodbyeProto) Intercept(m reliability.Message, now time.Time) bool {
	if len(m.Payload) == 1 && m.Payload[0] == 0xff {
		g.c.PeerClosing(now)
		return true
	}
	return false
}

// TestCoreCloseTimeout: a peer that never acknowledges lets Close end at
// its deadline.
func TestCoreCloseTimeout(t *testing.T) {
	p := newPair(t, nil, 1<<20)
	p.a.Engine().Send([]byte("into the void"), reliability.Reliable, 0, reliability.Medium, p.now)
	p.a.Close(p.now, 300*time.Millisecond)
	for i := 0; i < 100 && !p.a.Ended(); i++ {
		p.a.Poll(p.now, nil, func([]byte) {})
		p.now = p.now.Add(10 * time.Millisecond)
	}
	if !p.a.Ended() || p.a.Err() != nil {
		t.Fatalf("ended %v err %v", p.a.Ended(), p.a.Err())
	}
	if d := p.now.Sub(testEpoch); d < 300*time.Millisecond || d > 320*time.Millisecond {
		t.Fatalf("ended after %v, want the 300 ms close timeout", d)
	}
}

// TestCorePeerGone: a peer that leaves out of band ends the Core at
// once, and every message its engine delivered stays readable, past
// ReceiveBuffer too.
func TestCorePeerGone(t *testing.T) {
	p := newPair(t, nil, 100)
	for i := range 5 {
		p.a.Engine().Send(bytes.Repeat([]byte{byte(i)}, 80), reliability.ReliableOrdered, 0, reliability.Medium, p.now)
	}
	p.pump(10 * time.Millisecond)
	if p.b.Queued() >= 400 {
		t.Fatalf("ReceiveBuffer not applied: %d queued", p.b.Queued())
	}
	p.b.PeerGone(p.now, errPeer)
	if !p.b.Ended() || !p.b.PeerClosed() || !errors.Is(p.b.Err(), errPeer) {
		t.Fatalf("ended %v peer closed %v err %v", p.b.Ended(), p.b.PeerClosed(), p.b.Err())
	}
	for i := range 5 {
		if !p.b.HasMessage() {
			t.Fatalf("message %d lost", i)
		}
		if m := p.b.ReadMessage(); m.Data[0] != byte(i) {
			t.Fatalf("message %d: got %d", i, m.Data[0])
		}
	}
}

// TestCoreDeadTimeout: silence for DeadTimeout ends the Core with
// ErrLost, and NextWake says when.
func TestCoreDeadTimeout(t *testing.T) {
	p := newPair(t, nil, 1<<20)
	if w := p.a.NextWake(); !w.Equal(testEpoch.Add(5 * time.Second)) {
		t.Fatalf("NextWake %v, want the dead timeout", w.Sub(testEpoch))
	}
	p.a.Poll(testEpoch.Add(5*time.Second-time.Nanosecond), nil, func([]byte) {})
	if p.a.Ended() {
		t.Fatal("ended before the dead timeout")
	}
	p.a.Poll(testEpoch.Add(5*time.Second), nil, func([]byte) {})
	if !p.a.Ended() || !errors.Is(p.a.Err(), errLost) {
		t.Fatalf("ended %v err %v", p.a.Ended(), p.a.Err())
	}
	if !p.a.NextWake().IsZero() {
		t.Fatal("an ended Core still wants to wake")
	}
}

// TestCoreCloseBeforeUp: a Core whose handshake never finished ends at
// the next Poll, without a goodbye.
func TestCoreCloseBeforeUp(t *testing.T) {
	c, err := NewCore(Config{Engine: reliability.Config{MTU: 1228}, ReceiveBuffer: 1 << 10, Goodbye: []byte{0xff}, ErrLost: errLost, ErrPeerClosed: errPeer}, testEpoch)
	if err != nil {
		t.Fatal(err)
	}
	c.SetProtocol(&testProto{})
	c.Close(testEpoch, time.Second)
	sent := 0
	c.Poll(testEpoch, nil, func([]byte) { sent++ })
	if !c.Ended() || sent != 0 {
		t.Fatalf("ended %v, %d datagrams sent", c.Ended(), sent)
	}
}
