package netcode

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"time"

	"github.com/netrak/netrak/internal/driver"
	"github.com/netrak/netrak/transport"
)

// ServerMessage is a payload a client sent, as ServerConn.Receive returns it.
type ServerMessage struct {
	ClientIndex int
	ClientID    uint64
	// Sequence is the packet sequence number the payload arrived with.
	Sequence uint64
	// Payload belongs to the caller.
	Payload []byte
}

// ServerConn runs a Server over a transport.Conn with its own goroutines:
// one reads datagrams, one runs the server's Update when its NextTimeout
// comes (a keep-alive or a timeout is due). Its methods are safe for
// concurrent use, and the blocking ones take a context. After Close they
// return net.ErrClosed.
//
// A failed read is retried, after a growing pause if reads keep failing.
// After about 5 s of reads failing in a row the ServerConn gives up: it
// stops the server (disconnecting every client), closes the transport, and
// from then on Receive, NextEvent and Send return an error wrapping
// ErrTransportFailed and the transport's last error, once the payloads and
// events that came before are drained.
type ServerConn struct {
	connDriver

	s        *Server
	msgs     []ServerMessage
	maxMsgs  int
	events   []Event
	msgReady chan struct{} // capacity 1: "msgs may be non-empty"
	evReady  chan struct{} // capacity 1: "events may be non-empty"
}

// ListenServer starts a server on conn, which the ServerConn owns from then
// on: it is closed when ListenServer fails and by ServerConn.Close. A zero
// cfg.PublicAddress means conn.LocalAddr(), which only works if clients'
// tokens name the bound address (not a wildcard like 0.0.0.0).
func ListenServer(conn transport.Conn, cfg ServerConfig) (*ServerConn, error) {
	if !cfg.PublicAddress.IsValid() {
		cfg.PublicAddress = conn.LocalAddr()
		if cfg.PublicAddress.Addr().IsUnspecified() {
			conn.Close()
			return nil, errors.New("netcode: ServerConfig.PublicAddress is required when bound to a wildcard address")
		}
	}
	s, err := NewServer(cfg)
	if err == nil {
		err = s.Start(time.Now())
	}
	if err != nil {
		conn.Close()
		return nil, err
	}
	c := &ServerConn{
		connDriver: connDriver{conn: conn},
		s:          s,
		maxMsgs:    max(1024, 16*s.MaxClients()),
		msgReady:   make(chan struct{}, 1),
		evReady:    make(chan struct{}, 1),
	}
	c.start(c)
	return c, nil
}

// LocalAddr is the address of the underlying transport.
func (c *ServerConn) LocalAddr() netip.AddrPort { return c.conn.LocalAddr() }

func (c *ServerConn) receiveLocked(p []byte, from netip.AddrPort, now time.Time) {
	c.s.Receive(p, from, now)
	if i, ok := c.s.byAddr[from]; ok {
		c.collectPayloads(i)
	}
	c.flushLocked()
}

func (c *ServerConn) updateLocked(now time.Time) {
	c.s.Update(now)
	c.flushLocked()
}

func (c *ServerConn) nextTimeoutLocked() time.Time { return c.s.NextTimeout() }

func (c *ServerConn) shutdownLocked(now time.Time, err error) {
	if err != nil {
		c.s.log.Warn().Err(err).Msg("netcode server: giving up on the transport")
	}
	c.s.Stop(now)
	c.flushLocked()
}

func (c *ServerConn) releaseLocked() { c.msgs, c.events = nil, nil }

// collectPayloads moves client i's received payloads to the shared queue.
func (c *ServerConn) collectPayloads(i int) {
	id := c.s.slots[i].id
	for {
		p, seq, ok := c.s.ReceivePayload(i)
		if !ok {
			break
		}
		if len(c.msgs) >= c.maxMsgs {
			c.s.drop(ServerDropReceiveQueueFull)
			continue
		}
		c.msgs = append(c.msgs, ServerMessage{ClientIndex: i, ClientID: id, Sequence: seq, Payload: append([]byte(nil), p...)})
	}
	if len(c.msgs) > 0 {
		driver.Poke(c.msgReady)
	}
}

// flushLocked sends queued datagrams and publishes events.
func (c *ServerConn) flushLocked() {
	for _, d := range c.s.Outgoing() {
		// A lost datagram is not an error for a datagram protocol; a closed
		// conn is noticed by the reader.
		c.conn.WriteTo(d.Data, d.Addr)
	}
	if ev := c.s.Events(); len(ev) > 0 {
		c.events = append(c.events, ev...)
		if over := len(c.events) - (4*c.s.MaxClients() + 64); over > 0 {
			// Nobody is draining NextEvent: keep memory bounded, drop the
			// oldest and count them.
			c.events = append(c.events[:0], c.events[over:]...)
			c.s.stats.EventsDropped += uint64(over)
		}
		driver.Poke(c.evReady)
	}
}

// Receive blocks until a client payload arrives, ctx ends, or c is closed.
// Once c has given up on its transport, Receive returns the payloads that
// arrived before, then the error (see ServerConn).
func (c *ServerConn) Receive(ctx context.Context) (ServerMessage, error) {
	return awaitQueued(ctx, c, &c.msgs, c.msgReady)
}

// NextEvent blocks until a client connects or disconnects, ctx ends, or c
// is closed. Once c has given up on its transport, NextEvent returns the
// events that came before, including the disconnection of every client,
// then the error (see ServerConn).
func (c *ServerConn) NextEvent(ctx context.Context) (Event, error) {
	return awaitQueued(ctx, c, &c.events, c.evReady)
}

// awaitQueued pops the oldest item of q, one of c's queues, waiting on
// ready, which the producer signals, until there is one.
func awaitQueued[T any](ctx context.Context, c *ServerConn, q *[]T, ready chan struct{}) (T, error) {
	var zero T
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return zero, net.ErrClosed
		}
		if len(*q) > 0 {
			v := (*q)[0]
			(*q)[0] = zero // the backing array outlives the item
			*q = (*q)[1:]
			if len(*q) > 0 {
				driver.Poke(ready) // wake another waiter
			}
			c.mu.Unlock()
			return v, nil
		}
		if err := c.failed; err != nil {
			c.mu.Unlock()
			return zero, err
		}
		c.mu.Unlock()
		select {
		case <-ready:
		case <-ctx.Done():
			return zero, ctx.Err()
		case <-c.done:
		}
	}
}

// Send sends a payload to the client in slot index (see Server.SendPayload).
func (c *ServerConn) Send(index int, payload []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return net.ErrClosed
	}
	if c.failed != nil {
		return c.failed
	}
	// The payload is stamped with the server's clock, which must be now,
	// as it would be if Update ran continuously, not the time of the last
	// datagram or timer.
	c.s.advance(time.Now())
	err := c.s.SendPayload(index, payload)
	c.flushLocked()
	c.wakeLocked()
	return err
}

// Disconnect disconnects the client in slot index (see
// Server.DisconnectClient).
func (c *ServerConn) Disconnect(index int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return net.ErrClosed
	}
	if c.failed != nil {
		return c.failed
	}
	if err := c.s.DisconnectClient(index); err != nil {
		return err
	}
	c.flushLocked()
	c.wakeLocked()
	return nil
}

// Client describes the client in slot index.
func (c *ServerConn) Client(index int) (ClientInfo, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.s.Client(index)
}

// ConnectedClients is the number of occupied slots.
func (c *ServerConn) ConnectedClients() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.s.ConnectedClients()
}

// Stats returns the server's counters.
func (c *ServerConn) Stats() ServerStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.s.Stats()
}

// Close disconnects every client (sending their disconnect packets), stops
// the goroutines and closes the transport. Later calls return nil.
func (c *ServerConn) Close() error { return c.close() }
