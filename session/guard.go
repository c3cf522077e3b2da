package session

import (
	"sync"

	"github.com/netrak/netrak/internal/endpoint"
)

// guard is the one lock of a session server or client, which covers its
// netcode core and every connection's engine, with the connection
// outcomes that wait for it to be released: waking blocked callers,
// handing connections to Accept and scheduling timers must not happen
// under it.
type guard struct {
	mu      sync.Mutex
	pending []settling
	// spare is a second array for pending while one is being settled
	// outside mu, so that the reader and the timer loop each settling a
	// batch append without allocating.
	spare []settling
}

type settling struct {
	c *Conn
	o endpoint.Outcome
}

// later records an outcome to settle at the next unlockAndSettle.
func (g *guard) later(c *Conn, o endpoint.Outcome) {
	g.pending = append(g.pending, settling{c, o})
}

// unlockAndSettle releases mu, then settles the pending outcomes.
func (g *guard) unlockAndSettle() {
	pending := g.pending
	if len(pending) == 0 {
		g.mu.Unlock()
		return
	}
	g.pending, g.spare = g.spare[:0], nil
	g.mu.Unlock()
	for i, s := range pending {
		s.c.ep.Settle(s.o)
		pending[i] = settling{}
	}
	g.mu.Lock()
	if g.spare == nil {
		g.spare = pending[:0] // keep the array: no allocation per datagram
	}
	g.mu.Unlock()
}
