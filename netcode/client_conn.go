package netcode

import (
	"context"
	"net"
	"net/netip"
	"time"

	"github.com/netrak/netrak/internal/driver"
	"github.com/netrak/netrak/transport"
)

// ClientMessage is a payload the server sent, as ClientConn.Receive
// returns it.
type ClientMessage struct {
	// Sequence is the packet sequence number the payload arrived with.
	Sequence uint64
	// Payload belongs to the caller.
	Payload []byte
}

// ClientConn runs a Client over a transport.Conn with its own goroutines:
// one reads datagrams, one runs the client's Update when its NextTimeout
// comes (a request, response or keep-alive is due, or a timeout). Its
// methods are safe for concurrent use, and the blocking ones take a
// context. After Close they return net.ErrClosed.
//
// A failed read is retried, after a growing pause if reads keep failing.
// After about 5 s of reads failing in a row the ClientConn gives up: it
// disconnects (sending the disconnect packets), closes the transport, and
// ends the connection with an error wrapping ErrTransportFailed and the
// transport's last error, which Dial, Receive and Send return.
type ClientConn struct {
	connDriver

	c       *Client
	ended   error // why the connection ended, once it has
	msgs    []ClientMessage
	maxMsgs int
	ready   chan struct{} // capacity 1: "msgs or the state may have changed"
}

// Dial connects to a server with a connect token over conn, which the
// ClientConn owns from then on: it is closed when Dial fails and by
// ClientConn.Close. Dial blocks until the client is connected, reaches an
// error state (ErrConnectionDenied, ErrConnectionRequestTimedOut,
// ErrConnectTokenExpired, ... after trying every server address in the
// token), gives up on conn (an error wrapping ErrTransportFailed), or ctx
// ends. An invalid token fails at once with an error wrapping
// ErrInvalidConnectToken. A server that disconnects the client before Dial
// has seen it connected makes Dial return ErrDisconnected.
func Dial(ctx context.Context, conn transport.Conn, token []byte, cfg ClientConfig) (*ClientConn, error) {
	c, err := NewClient(cfg)
	if err != nil {
		conn.Close()
		return nil, err
	}
	if err := c.Connect(token, time.Now()); err != nil {
		conn.Close()
		return nil, err
	}
	cc := &ClientConn{
		connDriver: connDriver{conn: conn},
		c:          c,
		maxMsgs:    c.queueSize,
		ready:      make(chan struct{}, 1),
	}
	cc.flushLocked() // the first request; no goroutine runs yet
	cc.start(cc)

	for {
		cc.mu.Lock()
		st, failed := cc.c.State(), cc.failed
		cc.mu.Unlock()
		switch {
		case failed != nil:
			cc.Close()
			return nil, failed
		case st == ClientConnected:
			return cc, nil
		case st <= ClientDisconnected:
			cc.Close()
			return nil, st.Err()
		}
		select {
		case <-cc.ready:
		case <-ctx.Done():
			cc.Close()
			return nil, ctx.Err()
		}
	}
}

func (cc *ClientConn) receiveLocked(p []byte, from netip.AddrPort, now time.Time) {
	before := cc.c.State()
	cc.c.Receive(p, from, now)
	cc.afterLocked(before)
}

func (cc *ClientConn) updateLocked(now time.Time) {
	before := cc.c.State()
	cc.c.Update(now)
	cc.afterLocked(before)
}

func (cc *ClientConn) nextTimeoutLocked() time.Time { return cc.c.NextTimeout() }

func (cc *ClientConn) shutdownLocked(now time.Time, err error) {
	if err != nil {
		cc.c.log.Warn().Err(err).Msg("netcode client: giving up on the transport")
		if cc.ended == nil {
			cc.ended = err
		}
	}
	cc.c.Disconnect(now)
	cc.flushLocked()
	driver.Poke(cc.ready)
}

func (cc *ClientConn) releaseLocked() { cc.msgs = nil }

// afterLocked sends what the client queued, collects its payloads and
// notes the end of the connection.
func (cc *ClientConn) afterLocked(before ClientState) {
	cc.flushLocked()
	changed := false
	for {
		p, seq, ok := cc.c.ReceivePayload()
		if !ok {
			break
		}
		if len(cc.msgs) >= cc.maxMsgs {
			cc.c.drop(ClientDropReceiveQueueFull)
			continue
		}
		cc.msgs = append(cc.msgs, ClientMessage{Sequence: seq, Payload: append([]byte(nil), p...)})
		changed = true
	}
	if st := cc.c.State(); st != before {
		changed = true
		if before == ClientConnected && cc.ended == nil {
			cc.ended = st.Err()
		}
	}
	if changed {
		driver.Poke(cc.ready)
	}
}

func (cc *ClientConn) flushLocked() {
	for _, d := range cc.c.Outgoing() {
		// A lost datagram is not an error for a datagram protocol; a closed
		// conn is noticed by the reader.
		cc.conn.WriteTo(d.Data, d.Addr)
	}
}

// Receive blocks until a payload from the server arrives, ctx ends, the
// connection ends or cc is closed. Payloads that arrived before the server
// disconnected are still returned; after them Receive returns the reason
// the connection ended (ErrDisconnected for a server-side disconnect,
// ErrConnectionTimedOut for a silent server, an error wrapping
// ErrTransportFailed when cc gave up on its transport).
func (cc *ClientConn) Receive(ctx context.Context) (ClientMessage, error) {
	for {
		cc.mu.Lock()
		if cc.closed {
			cc.mu.Unlock()
			return ClientMessage{}, net.ErrClosed
		}
		if len(cc.msgs) > 0 {
			m := cc.msgs[0]
			cc.msgs[0] = ClientMessage{}
			cc.msgs = cc.msgs[1:]
			if len(cc.msgs) > 0 {
				driver.Poke(cc.ready) // wake another waiter
			}
			cc.mu.Unlock()
			return m, nil
		}
		if err := cc.ended; err != nil {
			cc.mu.Unlock()
			driver.Poke(cc.ready)
			return ClientMessage{}, err
		}
		cc.mu.Unlock()
		select {
		case <-cc.ready:
		case <-ctx.Done():
			return ClientMessage{}, ctx.Err()
		case <-cc.done:
		}
	}
}

// Send sends one payload (1 to MaxPayloadBytes bytes) to the server. It
// fails with ErrPayloadSize for a bad size, with the reason the connection
// ended once it has, and with net.ErrClosed after Close.
func (cc *ClientConn) Send(payload []byte) error {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.closed {
		return net.ErrClosed
	}
	if cc.ended != nil {
		return cc.ended
	}
	// The payload is stamped with the client's clock, which must be now,
	// as it would be if Update ran continuously; bringing it there may run
	// a timer that was due, even the timeout.
	before := cc.c.State()
	cc.c.advance(time.Now())
	cc.afterLocked(before)
	if cc.ended != nil {
		return cc.ended
	}
	err := cc.c.SendPayload(payload)
	cc.flushLocked()
	cc.wakeLocked()
	return err
}

// State is the client's state.
func (cc *ClientConn) State() ClientState {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.c.State()
}

// ClientIndex is the slot the server gave this client (-1 once the
// connection has ended).
func (cc *ClientConn) ClientIndex() int {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.c.ClientIndex()
}

// MaxClients is the server's slot count (0 once the connection has ended).
func (cc *ClientConn) MaxClients() int {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.c.MaxClients()
}

// RemoteAddr is the address of the server the client connected to, which
// may be any of the token's server addresses.
func (cc *ClientConn) RemoteAddr() netip.AddrPort {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.c.server
}

// LocalAddr is the address of the underlying transport.
func (cc *ClientConn) LocalAddr() netip.AddrPort { return cc.conn.LocalAddr() }

// Stats returns the client's counters.
func (cc *ClientConn) Stats() ClientStats {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.c.Stats()
}

// Close disconnects cleanly (sending RedundantDisconnectCount disconnect
// packets if connected), stops the goroutines and closes the transport.
// Later calls return nil.
func (cc *ClientConn) Close() error { return cc.close() }
