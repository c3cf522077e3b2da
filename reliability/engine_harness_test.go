package reliability

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/netrak/netrak/internal/rakwire"
)

// netPair wires two engines back to back through a simulated link with
// seeded loss, duplication, delay and jitter (jitter reorders), driven by
// a fake clock that jumps from event to event.
type netPair struct {
	tb     testing.TB
	e      [2]*Engine
	now    time.Time
	rng    *rand.Rand
	imp    impair
	q      []pkt // sorted by arrival time
	buf    []byte
	onRecv func(side int, m Message)     // called for each delivered message
	sent   [2]int                        // data datagrams handed out
	paused [2]bool                       // the application does not read this side
	drop   func(side int, b []byte) bool // if set, true loses the datagram side sent
	seq    int
}

type impair struct {
	loss, dup     float64
	delay, jitter time.Duration
}

type pkt struct {
	at  time.Time
	seq int
	to  int
	b   []byte
}

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newNetPair(tb testing.TB, seed uint64, cfg Config, imp impair) *netPair {
	tb.Helper()
	p := &netPair{tb: tb, now: epoch, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), imp: imp}
	for i := range p.e {
		e, err := New(cfg)
		if err != nil {
			tb.Fatal(err)
		}
		p.e[i] = e
	}
	return p
}

// pump collects every datagram both engines want to send now and drains
// delivered messages.
func (p *netPair) pump() {
	for side, e := range p.e {
		for {
			var ok bool
			p.buf, ok = e.AppendDatagram(p.buf[:0], p.now)
			if !ok {
				break
			}
			switch rakwire.ClassifyDatagram(p.buf) {
			case rakwire.DatagramData:
				p.sent[side]++
			case rakwire.DatagramACK, rakwire.DatagramNAK:
				// Patched RakNet builds refuse a range list unless each
				// range starts above the previous one's end.
				var a rakwire.Ack
				if _, err := rakwire.ParseAck(p.buf, &a); err != nil {
					p.tb.Fatalf("engine %d sent a malformed ACK: %v", side, err)
				}
				// Ascending and merged: each range starts more than one
				// above the previous one's end.
				for i := 1; i < len(a.Ranges); i++ {
					if a.Ranges[i].Min <= a.Ranges[i-1].Max+1 {
						p.tb.Fatalf("engine %d sent ACK ranges out of order or unmerged: %v", side, a.Ranges)
					}
				}
			}
			copies := 1
			if p.drop != nil && p.drop(side, p.buf) {
				copies = 0
			} else if p.rng.Float64() < p.imp.loss {
				copies = 0
			} else if p.rng.Float64() < p.imp.dup {
				copies = 2
			}
			for range copies {
				d := p.imp.delay
				if p.imp.jitter > 0 {
					d += time.Duration(p.rng.Int64N(int64(p.imp.jitter)))
				}
				p.seq++
				k := pkt{at: p.now.Add(d), seq: p.seq, to: 1 - side, b: slices.Clone(p.buf)}
				i, _ := slices.BinarySearchFunc(p.q, k, func(a, b pkt) int {
					if c := a.at.Compare(b.at); c != 0 {
						return c
					}
					return a.seq - b.seq
				})
				p.q = slices.Insert(p.q, i, k)
			}
		}
		// The in-flight windows stay inside a Bedrock client's limits.
		if e.rel.span() > maxReliableSpan || e.splitsOut > e.cfg.MaxOutstandingSplits {
			p.tb.Fatalf("engine %d: %d reliable indexes and %d split messages in flight", side, e.rel.span(), e.splitsOut)
		}
		// The per-channel backlog count is an upper bound on what the
		// peer really holds, and stays inside a Bedrock client's limit.
		peer := &p.e[1-side].rx.pipe.order
		for c := range uint8(NumOrderingChannels) {
			_, n := e.backlog(c)
			if held := len(peer.ch[c].held); n > maxChannelWaiting || held > n {
				p.tb.Fatalf("engine %d: counts %d messages the peer may hold on channel %d (limit %d); it holds %d", side, n, c, maxChannelWaiting, held)
			}
		}
		for !p.paused[side] {
			m, ok := e.ReadMessage()
			if !ok {
				break
			}
			if p.onRecv != nil {
				p.onRecv(side, m)
			}
		}
	}
}

// next returns the time of the next event, or false if nothing is pending.
func (p *netPair) next() (time.Time, bool) {
	var t time.Time
	if len(p.q) > 0 {
		t = p.q[0].at
	}
	for _, e := range p.e {
		if nt := e.NextTimeout(); !nt.IsZero() && (t.IsZero() || nt.Before(t)) {
			t = nt
		}
	}
	return t, !t.IsZero()
}

// run advances the simulation until done returns true or limit of
// simulated time passes; it fails the test on the limit.
func (p *netPair) run(limit time.Duration, done func() bool) {
	p.tb.Helper()
	end := p.now.Add(limit)
	p.pump()
	for !done() {
		t, ok := p.next()
		if !ok {
			p.tb.Logf("A: %+v", p.e[0].Stats())
			p.tb.Logf("B: %+v", p.e[1].Stats())
			p.tb.Fatalf("simulation idle before done at %v", p.now.Sub(epoch))
		}
		if t.After(p.now) {
			p.now = t
		}
		if p.now.After(end) {
			for _, e := range p.e {
				p.tb.Logf("splitsOut=%d relspan=%d resend=%d sentspan=%d count=%d q=%d,%d,%d,%d next=%v pace=%v", e.splitsOut, e.rel.span(), e.resend.len(), e.sent.span(), e.sent.count,
					e.queues[0].len(), e.queues[1].len(), e.queues[2].len(), e.queues[3].len(), e.NextTimeout().Sub(p.now), e.paceAt.Sub(p.now))
			}
			p.tb.Logf("A: %+v", p.e[0].Stats())
			p.tb.Logf("B: %+v", p.e[1].Stats())
			p.tb.Fatalf("simulation did not finish within %v", limit)
		}
		for len(p.q) > 0 && !p.q[0].at.After(p.now) {
			k := p.q[0]
			p.q = p.q[1:]
			p.e[k.to].Receive(k.b, p.now)
		}
		p.pump()
	}
}

// advance runs the simulation for exactly d of simulated time, however
// far off the next event is.
func (p *netPair) advance(d time.Duration) {
	end := p.now.Add(d)
	p.pump()
	for {
		t, ok := p.next()
		if !ok || t.After(end) {
			p.now = end
		} else if t.After(p.now) {
			p.now = t
		}
		for len(p.q) > 0 && !p.q[0].at.After(p.now) {
			k := p.q[0]
			p.q = p.q[1:]
			p.e[k.to].Receive(k.b, p.now)
		}
		p.pump()
		if !p.now.Before(end) {
			return
		}
	}
}
