package endpoint

import (
	"context"
	"net"
	"sync"
)

// Backlog holds a listener's connections that completed their handshake
// until Accept takes them. It is bounded: a listener whose application
// does not keep up drops what does not fit, rather than growing.
type Backlog[C any] struct {
	ch   chan C
	done chan struct{}
	once sync.Once
	err  error // why Accept fails for good; set before done closes

	net  string
	addr net.Addr
}

// NewBacklog returns a backlog of n connections whose Accept errors name
// network and addr, as net.OpError does.
func NewBacklog[C any](n int, network string, addr net.Addr) *Backlog[C] {
	return &Backlog[C]{ch: make(chan C, n), done: make(chan struct{}), net: network, addr: addr}
}

// Offer hands c to Accept without blocking. It reports false, keeping
// nothing, when the backlog is full or closed.
func (b *Backlog[C]) Offer(c C) bool {
	select {
	case <-b.done:
		return false
	default:
	}
	select {
	case b.ch <- c:
		return true
	default:
		return false
	}
}

// Accept waits for the next connection. It fails with ctx's error, or
// after Close with a *net.OpError wrapping the error Close was given.
func (b *Backlog[C]) Accept(ctx context.Context) (C, error) {
	var zero C
	select {
	case c := <-b.ch:
		return c, nil
	case <-b.done:
		return zero, &net.OpError{Op: "accept", Net: b.net, Addr: b.addr, Err: b.err}
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

// Close makes Accept fail from now on with err, or net.ErrClosed if err
// is nil; the first call decides. Connections still waiting are dropped:
// the listener closes them with the rest of its connections.
func (b *Backlog[C]) Close(err error) {
	b.once.Do(func() {
		if err == nil {
			err = net.ErrClosed
		}
		b.err = err
		close(b.done)
	})
	for {
		select {
		case <-b.ch:
		default:
			return
		}
	}
}

// Done is closed by the first Close.
func (b *Backlog[C]) Done() <-chan struct{} { return b.done }
