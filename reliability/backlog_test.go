package reliability

import (
	"encoding/binary"
	"io"
	"testing"
	"time"

	"github.com/netrak/netrak/internal/rakwire"
)

// carriesOrdered reports whether data datagram b has an ordered frame on
// channel ch.
func carriesOrdered(b []byte, ch uint8) bool {
	if rakwire.ClassifyDatagram(b) != rakwire.DatagramData {
		return false
	}
	_, frames, err := parseDataDatagram(b)
	if err != nil {
		return false
	}
	var f rakwire.Frame
	for frames.Next(&f) != io.EOF {
		if Reliability(f.Reliability).IsOrdered() && f.OrderingChannel == ch {
			return true
		}
	}
	return false
}

// An ordered message lost on a channel makes the receiver hold every later
// message on it. A sender streaming unreliable sequenced messages there
// must not push more than a Bedrock client holds (4097 per channel, past
// which it drops them after acknowledging them and the channel stalls):
// past the budget they are discarded at Send and counted, reliable ones
// wait in the queue, and the channel recovers once the loss is repaired.
func TestEngineSequencedBacklogBounded(t *testing.T) {
	const ch = 3
	p := newNetPair(t, 7, Config{}, impair{delay: 5 * time.Millisecond})
	blocked := true
	p.drop = func(side int, b []byte) bool { return side == 0 && blocked && carriesOrdered(b, ch) }

	const seqBase = 1 << 20
	var order []uint32 // ids delivered on ch, in order
	p.onRecv = func(side int, m Message) {
		if side != 1 || m.Channel != ch {
			t.Fatalf("side %d got a message on channel %d", side, m.Channel)
		}
		order = append(order, binary.LittleEndian.Uint32(m.Payload))
	}
	rx := &p.e[1].rx.pipe.order.ch[ch]
	maxHeld := 0
	step := func(limit int) {
		p.advance(time.Millisecond)
		maxHeld = max(maxHeld, len(rx.held))
		if len(rx.held) > limit {
			t.Fatalf("receiver holds %d messages on channel %d, bound %d", len(rx.held), ch, limit)
		}
	}

	mustSend(t, p.e[0], testMsg(0, 8), ReliableOrdered, ch, Medium, p.now)
	step(0)
	const nSeq = 10000
	for i := range nSeq {
		mustSend(t, p.e[0], testMsg(seqBase+uint32(i), 8), UnreliableSequenced, ch, Medium, p.now)
		if i%10 == 9 {
			step(maxSequencedWaiting)
		}
	}
	for range 100 {
		step(maxSequencedWaiting)
	}
	if got, want := p.e[0].Stats().Drops.SequencedBacklog, uint64(nSeq-maxSequencedWaiting); got != want {
		t.Fatalf("SequencedBacklog = %d, want %d", got, want)
	}
	// The sequenced frames that shared a datagram with a resend of the
	// lost message were lost with it; the others wait.
	if maxHeld < maxSequencedWaiting-100 {
		t.Fatalf("receiver held at most %d sequenced messages, want about %d", maxHeld, maxSequencedWaiting)
	}
	if len(order) != 0 {
		t.Fatalf("%d messages delivered past the lost one", len(order))
	}

	// Reliable messages on the channel fill the rest of the budget, then
	// wait in the queue.
	const nOrd = 3000
	for i := 1; i <= nOrd; i++ {
		mustSend(t, p.e[0], testMsg(uint32(i), 8), ReliableOrdered, ch, Medium, p.now)
	}
	for range 200 {
		step(maxChannelWaiting)
	}
	if q := p.e[0].Stats().QueuedMessages; q < nOrd-(maxChannelWaiting-maxSequencedWaiting) {
		t.Fatalf("%d ordered messages queued, want at least %d", q, nOrd-(maxChannelWaiting-maxSequencedWaiting))
	}
	if d := p.e[1].Stats().Drops; d.OrderingOverflow != 0 || d.RefusedDatagram != 0 {
		t.Fatalf("receiver refused held messages: %+v", d)
	}
	if p.e[0].Dead(p.now) {
		t.Fatal("sender declared the connection dead")
	}

	// Repair the loss: everything is delivered, ordered messages in order,
	// the held sequenced ones right after the first.
	blocked = false
	p.run(time.Minute, func() bool {
		maxHeld = max(maxHeld, len(rx.held))
		return len(order) > 0 && order[len(order)-1] == nOrd
	})
	if maxHeld > maxChannelWaiting {
		t.Fatalf("receiver held %d messages on channel %d", maxHeld, ch)
	}
	next, lastSeq := uint32(0), uint32(0)
	for _, id := range order {
		switch {
		case id >= seqBase:
			if next != 1 || id <= lastSeq {
				t.Fatalf("sequenced message %d delivered after ordered %d (last sequenced %d)", id-seqBase, next, lastSeq-seqBase)
			}
			lastSeq = id
		case id != next:
			t.Fatalf("ordered message %d delivered, want %d", id, next)
		default:
			next++
		}
	}
	if lastSeq == 0 {
		t.Fatal("no sequenced message delivered after the repair")
	}

	// The channel is back to normal: sequenced messages flow again.
	order = order[:0]
	for i := range 50 {
		mustSend(t, p.e[0], testMsg(2*seqBase+uint32(i), 8), UnreliableSequenced, ch, Medium, p.now)
		p.advance(time.Millisecond)
	}
	p.run(time.Minute, func() bool { return len(order) == 50 })
	if got, want := p.e[0].Stats().Drops.SequencedBacklog, uint64(nSeq-maxSequencedWaiting); got != want {
		t.Fatalf("SequencedBacklog grew to %d after the repair, want %d", got, want)
	}
	if _, n := p.e[0].backlog(ch); n != 0 {
		t.Fatalf("%d backlog records left with nothing outstanding", n)
	}
}

// Ordered, reliable sequenced and unreliable sequenced messages share
// channels at every priority on a lossy, reordering link: the harness
// checks on every step that each channel's count bounds what the receiver
// holds, ordered messages arrive complete and in order, and the
// backlog limit never deadlocks a channel (the oldest unacknowledged
// ordered message is never held back).
func TestEngineBacklogMixedKinds(t *testing.T) {
	p := newNetPair(t, 11, Config{}, lossy)
	const n = 6000
	var nextOrd [2]uint32
	p.onRecv = func(side int, m Message) {
		id := binary.LittleEndian.Uint32(m.Payload)
		if m.Reliability == ReliableOrdered {
			if want := nextOrd[m.Channel]*2 + uint32(m.Channel); id != want {
				t.Fatalf("channel %d: ordered message %d, want %d", m.Channel, id, want)
			}
			nextOrd[m.Channel]++
		}
	}
	kinds := []Reliability{ReliableOrdered, UnreliableSequenced, ReliableSequenced, UnreliableSequenced}
	ordered := 0
	for i := range uint32(n) {
		ch := uint8(i % 2)
		kind := kinds[(i/2)%uint32(len(kinds))]
		id := i
		if kind == ReliableOrdered {
			id = uint32(ordered)
			ordered++
			id = id - id%2 + uint32(ch) // per-channel sequence, see onRecv
		}
		size := 16
		if i%97 == 0 {
			size = 4000 // split
		}
		for {
			_, err := p.e[0].Send(testMsg(id, size), kind, ch, Priority((i/3)%4), p.now)
			if err == nil {
				break
			}
			if err != ErrQueueFull {
				t.Fatal(err)
			}
			p.advance(10 * time.Millisecond)
		}
		if i%25 == 0 {
			p.advance(time.Millisecond)
		}
	}
	p.run(time.Hour, func() bool {
		q, u := p.e[0].Outstanding()
		return q == 0 && u == 0 && int(nextOrd[0]+nextOrd[1]) == ordered
	})
	t.Logf("sequenced drops at the sender: %d", p.e[0].Stats().Drops.SequencedBacklog)
}
