package reliability

import (
	"encoding/binary"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/netrak/netrak/internal/rakwire"
)

func TestEngineConfigErrors(t *testing.T) {
	for _, cfg := range []Config{
		{MTU: 399},
		{MTU: 1493},
		{MaxQueueBytes: 100, MaxMessageSize: 200},
		{RTOMin: time.Second, RTOMax: time.Millisecond},
		{MaxOutstandingSplits: 256},
		{DeadTimeout: -1},
	} {
		_, err := New(cfg)
		var ce *ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("New(%+v) = %v, want a *ConfigError", cfg, err)
		}
	}
	e, err := New(Config{MTU: 1228})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.MaxDatagramSize(); got != 1200 {
		t.Errorf("MaxDatagramSize with MTU 1228 = %d, want 1200", got)
	}
}

func TestEngineSendErrors(t *testing.T) {
	e, err := New(Config{MaxMessageSize: 10000, MaxQueueBytes: 20000})
	if err != nil {
		t.Fatal(err)
	}
	now := epoch
	cases := []struct {
		msg  []byte
		r    Reliability
		ch   uint8
		prio Priority
		want error
	}{
		{[]byte{1}, 8, 0, Medium, ErrInvalidReliability},
		{[]byte{1}, Reliable, 32, Medium, ErrInvalidChannel},
		{[]byte{1}, ReliableOrdered, 255, Medium, ErrInvalidChannel},
		{[]byte{1}, Reliable, 0, 4, ErrInvalidPriority},
		{nil, Reliable, 0, Medium, ErrEmptyMessage},
		{make([]byte, 10001), Reliable, 0, Medium, ErrMessageTooLarge},
	}
	for _, c := range cases {
		if _, err := e.Send(c.msg, c.r, c.ch, c.prio, now); !errors.Is(err, c.want) {
			t.Errorf("Send(%d bytes, %v, %d, %v) = %v, want %v", len(c.msg), c.r, c.ch, c.prio, err, c.want)
		}
	}
	if s := e.Stats(); s.MessagesSent != 0 || s.HeldSendBytes != 0 {
		t.Fatalf("rejected sends were queued: %+v", s)
	}
	// Fill the queue: the message that does not fit is refused, and
	// everything accepted before stays queued.
	accepted := 0
	for {
		_, err := e.Send(make([]byte, 5000), ReliableOrdered, 0, Medium, now)
		if errors.Is(err, ErrQueueFull) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		accepted++
	}
	if accepted != 3 || e.Stats().QueuedMessages != 3 {
		t.Fatalf("accepted %d, queued %d; want 3", accepted, e.Stats().QueuedMessages)
	}
	e.Close()
	e.Close()
	if _, err := e.Send([]byte{1}, Reliable, 0, Medium, now); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Send after Close = %v, want net.ErrClosed", err)
	}
	if _, ok := e.AppendDatagram(nil, now); ok {
		t.Error("AppendDatagram produced a datagram after Close")
	}
}

// A peer that never answers: reliable data is resent with growing
// timeouts, then the connection is declared dead after DeadTimeout.
func TestEngineDeadPeer(t *testing.T) {
	e, err := New(Config{DeadTimeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	now := epoch
	mustSend(t, e, []byte("hello"), ReliableWithAckReceipt, 0, High, now)
	var sends []time.Duration
	for !e.Dead(now) {
		for {
			b, ok := e.AppendDatagram(nil, now)
			if !ok {
				break
			}
			if rakwire.ClassifyDatagram(b) == rakwire.DatagramData {
				sends = append(sends, now.Sub(epoch))
			}
		}
		next := e.NextTimeout()
		if next.IsZero() {
			t.Fatal("no timer while data is unacknowledged")
		}
		now = next
	}
	if d := now.Sub(epoch); d < 3*time.Second || d > 3*time.Second+time.Millisecond {
		t.Errorf("declared dead after %v, want 3s", d)
	}
	if len(sends) < 3 {
		t.Fatalf("sent %d times before dying, want resends", len(sends))
	}
	for i := 2; i < len(sends); i++ {
		if gap, prev := sends[i]-sends[i-1], sends[i-1]-sends[i-2]; gap < prev && gap < DefaultRTOMax {
			t.Errorf("resend gaps shrink: %v then %v (no backoff)", prev, gap)
		}
	}
	ev, ok := e.ReadEvent()
	if !ok || ev.Kind != EventDead {
		t.Errorf("event %+v, want EventDead", ev)
	}
	if _, err := e.Send([]byte{1}, Reliable, 0, Medium, now); !errors.Is(err, ErrDead) {
		t.Errorf("Send on dead connection = %v, want ErrDead", err)
	}
	t.Logf("sends at %v", sends)
}

// Bulk traffic on Low must not delay High messages behind it.
func TestEnginePriorityNoStarvation(t *testing.T) {
	p := newNetPair(t, 6, Config{}, impair{delay: 10 * time.Millisecond})
	// 4 MiB of bulk data queued first.
	for i := range 4 {
		mustSend(t, p.e[0], testMsg(uint32(i), 1<<20), ReliableOrdered, 1, Low, p.now)
	}
	p.run(time.Hour, func() bool { return p.e[0].Stats().FramesSent > 200 })
	sentAt := p.now
	mustSend(t, p.e[0], testMsg(99, 100), ReliableOrdered, 0, High, p.now)
	var highAt time.Time
	bulk := 0
	p.onRecv = func(side int, m Message) {
		if m.Channel == 0 {
			highAt = p.now
		} else {
			bulk++
		}
	}
	p.run(time.Hour, func() bool { return bulk == 4 })
	if highAt.IsZero() {
		t.Fatal("high-priority message not delivered")
	}
	if lat := highAt.Sub(sentAt); lat > 100*time.Millisecond {
		t.Errorf("high-priority message took %v behind bulk traffic", lat)
	}
}

// Huge ACK and NAK ranges cost work bounded by the in-flight window.
func TestEngineHostileAckRanges(t *testing.T) {
	e, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	now := epoch
	for i := range 20 {
		mustSend(t, e, testMsg(uint32(i), 500), Reliable, 0, Medium, now)
	}
	for {
		if _, ok := e.AppendDatagram(nil, now); !ok {
			break
		}
	}
	inflight := e.Stats().InFlightDatagrams
	if inflight == 0 {
		t.Fatal("nothing in flight")
	}
	// 300 ranges each naming all 2^24 numbers: the first acknowledges
	// everything, the rest find an empty window.
	rs := make([]rakwire.Range, 300)
	for i := range rs {
		rs[i] = rakwire.Range{Min: 0, Max: seqMask}
	}
	nak := encodeAck(t, rakwire.Ack{NAK: true, Ranges: rs[:1]})
	e.Receive(nak, now)
	if s := e.Stats(); s.DatagramsLost != uint64(inflight) {
		t.Fatalf("NAK of everything lost %d datagrams, want %d", s.DatagramsLost, inflight)
	}
	ack := encodeAck(t, rakwire.Ack{Ranges: rs})
	for i := 0; i < 10 && e.Stats().HeldSendBytes > 0; i++ {
		for {
			if _, ok := e.AppendDatagram(nil, now); !ok {
				break
			}
		}
		e.Receive(ack, now)
	}
	s := e.Stats()
	if s.InFlightDatagrams != 0 || s.HeldSendBytes != 0 {
		t.Fatalf("after ACK of everything: %d in flight, %d held", s.InFlightDatagrams, s.HeldSendBytes)
	}
	// Garbage of every kind is dropped and counted, never fatal.
	for _, b := range [][]byte{
		{0xc0, 0xff, 0xff},                // range count beyond the datagram
		{0xc0, 0, 1, 0, 5, 0, 0, 1, 0, 0}, // min > max
		{0x84, 0, 0},                      // truncated header
		{0x84, 0, 0, 0, 0x60, 0, 0},       // zero-length frame
		{0x84, 1, 0, 0, 0x60, 0, 8, 0, 0, 0, 0, 0, 0, 40, 0xaa}, // channel 40
	} {
		e.Receive(b, now)
	}
	d := e.Stats().Drops
	if d.MalformedACK != 2 || d.MalformedDatagram != 2 || d.InvalidFrame != 1 {
		t.Errorf("drops %+v", d)
	}
	if _, ok := e.ReadMessage(); ok {
		t.Error("garbage delivered a message")
	}
}

// Overlapping ranges that would revisit the window many times are cut off
// after one window's worth of work.
func TestEngineAckWorkBudget(t *testing.T) {
	e, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	now := epoch
	for i := range 8 {
		mustSend(t, e, testMsg(uint32(i), 1000), Reliable, 0, Medium, now)
	}
	for {
		if _, ok := e.AppendDatagram(nil, now); !ok {
			break
		}
	}
	// Leave datagram 0 unacknowledged so the window does not shrink, then
	// acknowledge 1..7 two hundred times over.
	rs := make([]rakwire.Range, 200)
	for i := range rs {
		rs[i] = rakwire.Range{Min: 1, Max: seqMask}
	}
	e.Receive(encodeAck(t, rakwire.Ack{Ranges: rs}), now)
	if s := e.Stats(); s.Drops.ACKWorkExceeded != 1 || s.InFlightDatagrams != 1 {
		t.Errorf("work budget drops %d, in flight %d", s.Drops.ACKWorkExceeded, s.InFlightDatagrams)
	}
}

// A receiver whose application stops reading holds at most about
// MaxReceiveBytes; the sender is slowed by unacknowledged datagrams, and
// everything arrives once reading resumes.
func TestEngineSlowReader(t *testing.T) {
	p := newNetPair(t, 8, Config{MaxReceiveBytes: 64 << 10}, impair{delay: 5 * time.Millisecond})
	got := 0
	p.onRecv = func(side int, m Message) { got++ }
	const n = 400
	for i := uint32(0); i < n; i++ {
		mustSend(t, p.e[0], testMsg(i, 3000), ReliableOrdered, 0, Medium, p.now)
	}
	p.paused[1] = true
	maxHeld := 0
	p.run(time.Hour, func() bool {
		maxHeld = max(maxHeld, p.e[1].Stats().ReceiveQueueBytes)
		return p.now.Sub(epoch) > 3*time.Second
	})
	p.paused[1] = false
	p.run(time.Hour, func() bool { return got == n })
	if limit := 64<<10 + p.e[1].MaxDatagramSize(); maxHeld > limit {
		t.Errorf("receiver held %d bytes unread, limit about %d", maxHeld, limit)
	}
	if p.e[1].Stats().Drops.ReceiveQueueFull == 0 {
		t.Error("no datagram was refused while the reader was idle")
	}
	if p.e[0].Dead(p.now) {
		t.Error("a 3 s pause in reading killed the connection")
	}
}

// A receiver with tight reassembly limits refuses split parts it has no
// room for without acknowledging them; the sender resends, and every
// message still arrives exactly once.
func TestEngineReassemblyLimits(t *testing.T) {
	p := newNetPair(t, 10, Config{}, impair{delay: 5 * time.Millisecond, jitter: 2 * time.Millisecond})
	small, err := New(Config{MaxSplitMessages: 2, MaxReassemblyBytes: 40 << 10})
	if err != nil {
		t.Fatal(err)
	}
	p.e[1] = small
	seen := map[uint32]int{}
	p.onRecv = func(side int, m Message) {
		id := binary.LittleEndian.Uint32(m.Payload)
		checkMsg(t, m.Payload, id, 8000+int(id))
		seen[id]++
	}
	const n = 60
	for i := uint32(0); i < n; i++ {
		mustSend(t, p.e[0], testMsg(i, 8000+int(i)), Reliable, 0, Medium, p.now)
	}
	p.run(time.Hour, func() bool {
		if r := small.Stats().ReassemblyBytes; r > 40<<10 {
			t.Fatalf("reassembly holds %d bytes", r)
		}
		return len(seen) == n
	})
	for id, c := range seen {
		if c != 1 {
			t.Errorf("message %d delivered %d times", id, c)
		}
	}
	if d := small.Stats().Drops; d.SplitRejected == 0 || d.RefusedDatagram == 0 {
		t.Errorf("limits never refused anything: %+v", d)
	}
}

// With every class backlogged, Immediate goes first and High, Medium and
// Low share the datagrams 4:2:1.
func TestEnginePriorityWeights(t *testing.T) {
	e, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	now := epoch
	full := make([]byte, e.MaxDatagramSize()-rakwire.DataHeaderLen-frameHeaderLen(ReliableOrdered, false))
	for i := 0; i < 200; i++ {
		for _, p := range []Priority{Low, Medium, High} {
			mustSend(t, e, full, ReliableOrdered, uint8(p), p, now)
		}
	}
	mustSend(t, e, full, ReliableOrdered, uint8(Immediate), Immediate, now)
	var count [numPriorities]int
	var f rakwire.Frame
	for i := 0; i < 1+7*20; i++ {
		b, ok := e.AppendDatagram(nil, now)
		if !ok {
			// The congestion window or the pacer holds the rest back:
			// acknowledge everything and let time pass.
			now = now.Add(10 * time.Millisecond)
			e.Receive(encodeAck(t, rakwire.Ack{Ranges: []rakwire.Range{{Min: 0, Max: seqMask}}}), now)
			i--
			continue
		}
		_, r, err := parseDataDatagram(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Next(&f); err != nil {
			t.Fatal(err)
		}
		if i == 0 && f.OrderingChannel != uint8(Immediate) {
			t.Fatalf("first datagram carries channel %d, want the Immediate message", f.OrderingChannel)
		}
		count[f.OrderingChannel]++
	}
	if count != [numPriorities]int{1, 80, 40, 20} {
		t.Errorf("frames per class (immediate, high, medium, low) = %v, want [1 80 40 20]", count)
	}
}

// At the smallest MTU, datagrams stay within MTU-28 bytes and large
// messages still arrive whole under loss.
func TestEngineMinMTU(t *testing.T) {
	p := newNetPair(t, 11, Config{MTU: MinMTU}, impair{loss: 0.1, delay: 10 * time.Millisecond, jitter: 5 * time.Millisecond})
	got := 0
	p.onRecv = func(side int, m Message) {
		checkMsg(t, m.Payload, uint32(got), 100_000+got)
		got++
	}
	for i := range 20 {
		mustSend(t, p.e[0], testMsg(uint32(i), 100_000+i), ReliableOrdered, 0, Medium, p.now)
	}
	longest := 0
	p.run(time.Hour, func() bool {
		for _, k := range p.q {
			longest = max(longest, len(k.b))
		}
		return got == 20
	})
	if longest > MinMTU-UDPIPOverhead {
		t.Errorf("a %d-byte datagram at MTU %d", longest, MinMTU)
	}
}

// Messages held back for ordering never make the receiver refuse the
// message they wait for: refusing it would stall the channel for good.
func TestEngineReceiveLimitTakesTheGapFiller(t *testing.T) {
	e, err := New(Config{MaxReceiveBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	now := epoch
	ordered := func(num, index uint32) []byte {
		return datagram(t, num, rakwire.Frame{Reliability: rakwire.ReliableOrdered, ReliableIndex: index, OrderingIndex: index, Payload: make([]byte, 1024)})
	}
	// Messages 1..4 arrive first and fill the hold (4 × 1024 bytes).
	for i := uint32(1); i <= 4; i++ {
		e.Receive(ordered(i, i), now)
	}
	if _, ok := e.ReadMessage(); ok {
		t.Fatal("delivered a message out of order")
	}
	// Message 0 arrives: it is taken, and all five are delivered.
	e.Receive(ordered(5, 0), now)
	n := 0
	for _, ok := e.ReadMessage(); ok; _, ok = e.ReadMessage() {
		n++
	}
	if n != 5 {
		t.Errorf("delivered %d messages, want 5; drops %+v", n, e.Stats().Drops)
	}
}
