package reliability

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netrak/netrak/transport"
	"github.com/netrak/netrak/transport/simnet"
)

// simPeer drives one Engine over a simnet endpoint, as a thin outer layer
// would: a goroutine reads datagrams with the read deadline set to the
// engine's NextTimeout, and every call into the engine holds mu.
type simPeer struct {
	mu    sync.Mutex
	e     *Engine
	conn  *simnet.Conn
	peer  netip.AddrPort
	out   []byte
	onMsg func(Message) // called with mu held
	onEvt func(Event)   // called with mu held; nil: events are discarded
	space chan struct{} // poked after input, for senders waiting on ErrQueueFull
}

func newSimPeer(t *testing.T, n *simnet.Network, addr string, cfg Config) *simPeer {
	conn, err := n.Listen(netip.MustParseAddrPort(addr))
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &simPeer{e: e, conn: conn, space: make(chan struct{}, 1)}
}

// flushLocked sends what the engine has due, hands out delivered messages
// and re-arms the reader's deadline.
func (p *simPeer) flushLocked() {
	now := time.Now()
	for {
		var ok bool
		p.out, ok = p.e.AppendDatagram(p.out[:0], now)
		if !ok {
			break
		}
		if err := p.conn.WriteTo(p.out, p.peer); err != nil {
			return
		}
	}
	for {
		m, ok := p.e.ReadMessage()
		if !ok {
			break
		}
		p.onMsg(m)
	}
	for {
		ev, ok := p.e.ReadEvent()
		if !ok {
			break
		}
		if p.onEvt != nil {
			p.onEvt(ev)
		}
	}
	next := p.e.NextTimeout()
	if next.IsZero() {
		next = now.Add(time.Second)
	}
	p.conn.SetReadDeadline(next)
}

func (p *simPeer) run() {
	buf := make([]byte, 2048)
	for {
		p.mu.Lock()
		p.flushLocked()
		p.mu.Unlock()
		n, _, err := p.conn.ReadFrom(buf)
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err == nil {
			p.mu.Lock()
			p.e.Receive(buf[:n], time.Now())
			p.mu.Unlock()
			select {
			case p.space <- struct{}{}:
			default:
			}
		}
	}
}

// send queues a message, waiting while the send queue is full, and
// returns its receipt. sendWith also calls sent with the receipt while mu
// is still held, before the receipt's event can fire.
func (p *simPeer) send(t *testing.T, msg []byte, r Reliability, ch uint8, prio Priority) uint32 {
	return p.sendWith(t, msg, r, ch, prio, nil)
}

func (p *simPeer) sendWith(t *testing.T, msg []byte, r Reliability, ch uint8, prio Priority, sent func(uint32)) uint32 {
	for {
		p.mu.Lock()
		receipt, err := p.e.Send(msg, r, ch, prio, time.Now())
		if err == nil && sent != nil {
			sent(receipt)
		}
		if err == nil {
			p.flushLocked()
		}
		p.mu.Unlock()
		switch {
		case err == nil:
			return receipt
		case errors.Is(err, ErrQueueFull):
			<-p.space
		default:
			t.Errorf("Send: %v", err)
			return 0
		}
	}
}

type plannedMsg struct {
	id   uint32
	size int
	ch   uint8
}

// plan returns n reliable-ordered messages: mostly small, some of a few
// KiB, a few of 64 KiB and 1 MiB, spread over channels.
func plan(seed uint64, n int, channels []uint8) []plannedMsg {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([]plannedMsg, n)
	for i := range out {
		size := 1 + rng.IntN(200)
		switch x := rng.IntN(1000); {
		case x == 0:
			size = 1 << 20
		case x < 6:
			size = 64 << 10
		case x < 100:
			size = 1000 + rng.IntN(8000)
		}
		out[i] = plannedMsg{id: uint32(i), size: size, ch: channels[rng.IntN(len(channels))]}
	}
	return out
}

// orderedChecker checks messages of a plan arrive complete, exactly once
// and in order on each channel.
type orderedChecker struct {
	t       *testing.T
	perCh   map[uint8][]plannedMsg
	next    map[uint8]int
	got     int
	want    int
	done    chan struct{}
	seqLast int64 // newest sequenced id seen on the sequenced channel
}

func newOrderedChecker(t *testing.T, p []plannedMsg) *orderedChecker {
	c := &orderedChecker{t: t, perCh: map[uint8][]plannedMsg{}, next: map[uint8]int{}, want: len(p), done: make(chan struct{}), seqLast: -1}
	for _, m := range p {
		c.perCh[m.ch] = append(c.perCh[m.ch], m)
	}
	return c
}

const seqChannel = 31

func (c *orderedChecker) onMsg(m Message) {
	if m.Channel == seqChannel {
		id := int64(m.Payload[0])<<24 | int64(m.Payload[1])<<16 | int64(m.Payload[2])<<8 | int64(m.Payload[3])
		if id <= c.seqLast {
			c.t.Errorf("sequenced message %d delivered after %d", id, c.seqLast)
		}
		c.seqLast = id
		return
	}
	if m.Reliability != ReliableOrdered {
		c.t.Errorf("message of kind %v on channel %d", m.Reliability, m.Channel)
		return
	}
	list := c.perCh[m.Channel]
	i := c.next[m.Channel]
	if i >= len(list) {
		c.t.Errorf("channel %d: extra message of %d bytes", m.Channel, len(m.Payload))
		return
	}
	want := list[i]
	if !bytes.Equal(m.Payload, testMsg(want.id, want.size)) {
		c.t.Errorf("channel %d: message %d (#%d on the channel) arrived wrong or out of order: %d bytes, want %d",
			m.Channel, want.id, i, len(m.Payload), want.size)
	}
	c.next[m.Channel] = i + 1
	c.got++
	if c.got == c.want {
		close(c.done)
	}
}

// TestScenarioSimnetReliableOrdered streams 10,000 reliable-ordered
// messages of 1 B to 1 MiB over four channels from A to B, and 2,000 from B
// to A at the same time, plus a sequenced stream, through a simulated
// network with 20% loss, 10% duplication, reordering and jitter. Every
// message must arrive complete, exactly once and in order; the sequenced
// stream never goes backwards.
func TestScenarioSimnetReliableOrdered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := simnet.New(42)
		n.SetDefault(transport.Impairment{
			Latency:   30 * time.Millisecond,
			Jitter:    10 * time.Millisecond,
			Loss:      0.2,
			Duplicate: 0.1,
			Reorder:   0.05,
			Bandwidth: 50 << 20,
			MTU:       1464,
		})
		n.SetReceiveQueue(8192)
		a := newSimPeer(t, n, "10.0.0.1:19132", Config{})
		b := newSimPeer(t, n, "10.0.0.2:19132", Config{})
		a.peer, b.peer = b.conn.LocalAddr(), a.conn.LocalAddr()

		planAB := plan(1, 10000, []uint8{0, 1, 2, 3})
		planBA := plan(2, 2000, []uint8{0, 5})
		checkB := newOrderedChecker(t, planAB)
		checkA := newOrderedChecker(t, planBA)
		b.onMsg = checkB.onMsg
		a.onMsg = checkA.onMsg

		var drivers sync.WaitGroup
		for _, p := range []*simPeer{a, b} {
			drivers.Go(p.run)
		}
		var senders sync.WaitGroup
		senders.Go(func() {
			for i, m := range planAB {
				a.send(t, testMsg(m.id, m.size), ReliableOrdered, m.ch, Medium)
				if i%10 == 0 {
					id := uint32(i)
					a.send(t, []byte{byte(id >> 24), byte(id >> 16), byte(id >> 8), byte(id), 0xee}, UnreliableSequenced, seqChannel, High)
				}
			}
		})
		senders.Go(func() {
			for _, m := range planBA {
				b.send(t, testMsg(m.id, m.size), ReliableOrdered, m.ch, Medium)
			}
		})
		start := time.Now()
		// A stall would otherwise run the fake clock forever.
		limit := time.After(4 * time.Hour)
		for _, done := range []chan struct{}{checkB.done, checkA.done} {
			select {
			case <-done:
			case <-limit:
				for _, p := range []*simPeer{a, b} {
					p.mu.Lock()
					t.Logf("%+v", p.e.Stats())
					t.Logf("queues %d %d %d %d resend %d sent span %d rel span %d splits %d next %v", p.e.queues[0].len(), p.e.queues[1].len(), p.e.queues[2].len(), p.e.queues[3].len(),
						p.e.resend.len(), p.e.sent.span(), p.e.rel.span(), p.e.splitsOut, p.e.NextTimeout().Sub(time.Now()))
					t.Logf("sent base %d next %d; rx next %d pending %v prev %v since %v", p.e.sent.base, p.e.sent.next, p.e.rx.pipe.acks.next, p.e.rx.pipe.acks.acks.r, p.e.rx.ackPrev, time.Since(p.e.rx.ackSince))
					p.mu.Unlock()
				}
				t.Errorf("stalled: %d of %d messages A->B, %d of %d B->A", checkB.got, checkB.want, checkA.got, checkA.want)
				a.conn.Close()
				b.conn.Close()
				drivers.Wait()
				return // the senders are left blocked; synctest reports them
			}
		}
		senders.Wait()
		elapsed := time.Since(start)
		a.conn.Close()
		b.conn.Close()
		drivers.Wait()

		sa, sb := a.e.Stats(), b.e.Stats()
		t.Logf("simulated %v; network %v", elapsed, n.Stats())
		t.Logf("A: sent %d datagrams, %d resends, loss %.2f, srtt %v, cwnd %d, drops %+v", sa.DatagramsSent, sa.Resends, sa.LossRate, sa.SmoothedRTT, sa.CongestionWindow, sa.Drops)
		t.Logf("B: sent %d datagrams, %d resends, drops %+v", sb.DatagramsSent, sb.Resends, sb.Drops)
		if checkB.seqLast < 0 {
			t.Error("no sequenced message delivered")
		}
	})
}

// TestScenarioSimnetReceiptsAndUnreliable sends a mix of unreliable and
// receipt kinds through the same impaired network: every receipt fires
// exactly once (reliable ones as acknowledged), unreliable messages are
// never resent (so never delivered twice) and reliable ones all arrive.
func TestScenarioSimnetReceiptsAndUnreliable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := simnet.New(7)
		n.SetDefault(transport.Impairment{
			Latency:   20 * time.Millisecond,
			Jitter:    8 * time.Millisecond,
			Loss:      0.2,
			Duplicate: 0.1,
			Reorder:   0.05,
			MTU:       1200,
		})
		cfg := Config{MTU: 1200 + UDPIPOverhead}
		a := newSimPeer(t, n, "10.0.0.1:1", cfg)
		b := newSimPeer(t, n, "10.0.0.2:1", cfg)
		a.peer, b.peer = b.conn.LocalAddr(), a.conn.LocalAddr()

		kinds := []Reliability{Unreliable, UnreliableWithAckReceipt, ReliableWithAckReceipt, ReliableOrderedWithAckReceipt}
		const total = 4000
		kindOf := map[uint32]Reliability{} // receipt -> kind
		fired := map[uint32]EventKind{}
		reliableWant := 0
		receipted := 0
		allFired := make(chan struct{})
		a.onEvt = func(ev Event) {
			k, ok := kindOf[ev.Receipt]
			switch {
			case !ok:
				t.Errorf("event %v for unknown receipt %d", ev.Kind, ev.Receipt)
			case fired[ev.Receipt] != 0:
				t.Errorf("receipt %d fired twice", ev.Receipt)
			case ev.Kind == EventLost && k.IsReliable():
				t.Errorf("%v message reported lost", k)
			}
			fired[ev.Receipt] = ev.Kind
			if len(fired) == receipted {
				close(allFired)
			}
		}
		seen := map[uint32]int{}
		reliableGot := 0
		allReliable := make(chan struct{})
		b.onMsg = func(m Message) {
			id := uint32(m.Payload[0])<<24 | uint32(m.Payload[1])<<16 | uint32(m.Payload[2])<<8 | uint32(m.Payload[3])
			seen[id]++
			if seen[id] > 1 {
				t.Errorf("message %d (%v) delivered twice", id, m.Reliability)
			}
			if m.Reliability.IsReliable() {
				reliableGot++
				if reliableGot == reliableWant {
					close(allReliable)
				}
			}
		}
		a.onMsg = func(Message) {}
		for i := range total {
			k := kinds[i%len(kinds)]
			if k.WantsReceipt() {
				receipted++
			}
			if k.IsReliable() {
				reliableWant++
			}
		}

		var drivers sync.WaitGroup
		for _, p := range []*simPeer{a, b} {
			drivers.Go(p.run)
		}
		for i := range total {
			k := kinds[i%len(kinds)]
			size := 8 + i%400
			if i%97 == 0 && k.IsReliable() {
				size = 5000 // split
			}
			msg := make([]byte, size)
			msg[0], msg[1], msg[2], msg[3] = byte(i>>24), byte(i>>16), byte(i>>8), byte(i)
			a.sendWith(t, msg, k, 4, Medium, func(r uint32) {
				if k.WantsReceipt() {
					kindOf[r] = k
				}
			})
			if i%8 == 0 {
				time.Sleep(time.Millisecond) // a game-like send rate
			}
		}
		<-allReliable
		<-allFired
		a.conn.Close()
		b.conn.Close()
		drivers.Wait()

		lost := 0
		for r, ev := range fired {
			if ev == EventLost {
				lost++
				if kindOf[r] != UnreliableWithAckReceipt {
					t.Errorf("receipt %d of kind %v lost", r, kindOf[r])
				}
			}
		}
		if lost == 0 {
			t.Error("no unreliable receipt reported lost under 20% loss")
		}
		unreliable := 0
		for id := range seen {
			if !kinds[id%uint32(len(kinds))].IsReliable() {
				unreliable++
			}
		}
		sa := a.e.Stats()
		t.Logf("receipts %d (%d lost), unreliable delivered %d of %d, resends %d", len(fired), lost, unreliable, total/2, sa.Resends)
		if unreliable == total/2 {
			t.Error("every unreliable message arrived under 20% loss")
		}
	})
}
