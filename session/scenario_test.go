package session

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/netrak/netrak/reliability"
	"github.com/netrak/netrak/transport"
)

// mixedPlan is the deterministic list of messages one side sends: kinds,
// channels and sizes drawn from a seeded generator, so the receiver can
// rebuild what it should get.
type planned struct {
	r       reliability.Reliability
	channel uint8
	size    int
}

// Channels: ordered messages use 0..3, sequenced 4..5, the rest 0.
func mixedPlan(seed uint64, n int) []planned {
	rng := rand.New(rand.NewPCG(seed, 0x5e55))
	plan := make([]planned, n)
	for i := range plan {
		p := &plan[i]
		switch k := rng.IntN(10); {
		case k < 5:
			p.r, p.channel = reliability.ReliableOrdered, uint8(rng.IntN(4))
		case k < 6:
			p.r = reliability.Reliable
		case k < 8:
			p.r, p.channel = reliability.UnreliableSequenced, 4+uint8(rng.IntN(2))
		default:
			p.r = reliability.Unreliable
		}
		switch {
		case i == n/2:
			p.size = 256 << 10 // one message of the largest size
		case i%100 == 7:
			p.size = 4<<10 + rng.IntN(28<<10) // split over a few datagrams
		default:
			p.size = 1 + rng.IntN(rng.IntN(1100)+1) // mostly small
		}
		if p.size < msgHeader && p.r != reliability.Unreliable {
			p.size = msgHeader
		}
	}
	return plan
}

// msgHeader is the index that starts every message of 5 bytes or more;
// shorter (unreliable) messages are identified by their content alone.
const msgHeader = 4

// fill writes message i of a plan: its index, then bytes derived from
// seed and i.
func fill(b []byte, seed uint64, i int) {
	if len(b) >= msgHeader {
		binary.BigEndian.PutUint32(b, uint32(i))
	}
	x := byte(seed) ^ byte(i*7)
	for j := min(len(b), msgHeader); j < len(b); j++ {
		b[j] = x + byte(j)
	}
	if len(b) < msgHeader {
		for j := range b {
			b[j] = 0xee
		}
	}
}

// exchange sends plan over c (generated from seed) while reading and
// checking the peer's plan (from peerSeed); it returns when every
// reliable message of the peer's plan has arrived.
func exchange(c *Conn, seed uint64, plan []planned, peerSeed uint64, peerPlan []planned) error {
	errc := make(chan error, 1)
	go func() {
		buf := make([]byte, 256<<10)
		for i, p := range plan {
			fill(buf[:p.size], seed, i)
			if _, err := c.WriteMessage(buf[:p.size], p.r, p.channel, reliability.Medium); err != nil {
				errc <- fmt.Errorf("write %d: %w", i, err)
				return
			}
		}
		errc <- nil
	}()
	if err := checkReceive(c, peerSeed, peerPlan); err != nil {
		return err
	}
	return <-errc
}

func checkReceive(c *Conn, seed uint64, plan []planned) error {
	reliable := 0
	for _, p := range plan {
		if p.r.IsReliable() {
			reliable++
		}
	}
	seen := make([]bool, len(plan))
	lastOrdered := map[uint8]int{}
	lastSequenced := map[uint8]int{}
	want := make([]byte, 256<<10)
	buf := make([]byte, 256<<10)
	for got := 0; got < reliable; {
		m, err := c.ReadMessageInto(buf)
		if err != nil {
			return fmt.Errorf("read after %d of %d reliable: %w", got, reliable, err)
		}
		buf = m.Data
		if len(m.Data) < msgHeader {
			continue // a short unreliable message: nothing to check but its content
		}
		i := int(binary.BigEndian.Uint32(m.Data))
		if i >= len(plan) {
			return fmt.Errorf("message index %d out of range", i)
		}
		p := plan[i]
		fill(want[:p.size], seed, i)
		if !bytes.Equal(m.Data, want[:p.size]) {
			return fmt.Errorf("message %d (%v, %d bytes): content differs (got %d bytes)", i, p.r, p.size, len(m.Data))
		}
		if seen[i] {
			return fmt.Errorf("message %d (%v) delivered twice", i, p.r)
		}
		seen[i] = true
		switch p.r {
		case reliability.ReliableOrdered:
			if last, ok := lastOrdered[p.channel]; ok && i < last {
				return fmt.Errorf("channel %d: ordered message %d after %d", p.channel, i, last)
			}
			for j := i - 1; j >= 0 && j > lastOrdered[p.channel]; j-- {
				if plan[j].r == reliability.ReliableOrdered && plan[j].channel == p.channel && !seen[j] {
					return fmt.Errorf("channel %d: ordered message %d delivered before %d", p.channel, i, j)
				}
			}
			lastOrdered[p.channel] = i
		case reliability.UnreliableSequenced:
			if last, ok := lastSequenced[p.channel]; ok && i < last {
				return fmt.Errorf("channel %d: sequenced message %d after %d", p.channel, i, last)
			}
			lastSequenced[p.channel] = i
		}
		if p.r.IsReliable() {
			got++
		}
	}
	return nil
}

// TestScenario64ClientsMixed: 64 clients and the server each send 1,000
// mixed messages (1 B to 256 KiB; reliable-ordered on four channels,
// reliable, unreliable-sequenced on two, unreliable) over links with 10%
// loss, 5% duplication, reordering and ±10 ms jitter. No reliable message
// is lost, duplicated or out of order on its channel, sequenced messages
// never go backwards, and unreliable ones never arrive twice.
func TestScenario64ClientsMixed(t *testing.T) {
	const clients, messages = 64, 1000
	scenario(t, 64, func(t *testing.T, w *world) {
		w.net.SetDefault(transport.Impairment{
			Latency: 20 * time.Millisecond, Jitter: 10 * time.Millisecond,
			Loss: 0.10, Duplicate: 0.05, Reorder: 0.02,
		})
		const srv = "10.0.0.1:40000"
		l := w.server(srv, nil)
		var wg sync.WaitGroup
		errs := make(chan error, 2*clients)
		for k := range clients {
			tok := w.token(nil, srv)
			addr := fmt.Sprintf("10.0.1.%d:5000", k+1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				c, err := w.dial(addr, tok, nil)
				if err != nil {
					errs <- fmt.Errorf("client %d: dial: %w", k, err)
					return
				}
				seed, peer := uint64(1000+k), uint64(2000+k)
				if err := exchange(c, seed, mixedPlan(seed, messages), peer, mixedPlan(peer, messages)); err != nil {
					errs <- fmt.Errorf("client %d: %w", k, err)
				}
			}()
		}
		for range clients {
			s := accept(t, l, 30*time.Second)
			k := int(s.ClientID() - 101)
			wg.Add(1)
			go func() {
				defer wg.Done()
				seed, peer := uint64(2000+k), uint64(1000+k)
				if err := exchange(s, seed, mixedPlan(seed, messages), peer, mixedPlan(peer, messages)); err != nil {
					errs <- fmt.Errorf("server side of client %d: %w", k, err)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}
