package session

import (
	"context"
	"net/netip"
	"time"

	"github.com/rs/zerolog"

	"github.com/netrak/netrak/internal/driver"
	"github.com/netrak/netrak/internal/endpoint"
	"github.com/netrak/netrak/netcode"
	"github.com/netrak/netrak/transport"
)

// client drives one netcode client and, once connected, its connection,
// on one loop and one reader under one lock.
type client struct {
	guard // mu guards everything below and the Conn's state
	cfg   ClientConfig
	log   zerolog.Logger
	tc    transport.Conn
	loop  *driver.Loop
	h     *driver.Handle

	nc     *netcode.Client
	conn   *Conn
	failed error // the reader gave up on the socket

	changed  chan struct{} // poked when the netcode state may have changed
	stop     chan struct{}
	readDone chan struct{}
}

// Dial connects to a session server with a 2048-byte netcode connect
// token, trying the token's server addresses in turn, and returns once
// connected. It fails with the reason the last server gave (errors.Is
// matches netcode.ErrConnectionDenied, netcode.ErrConnectTokenExpired,
// netcode.ErrConnectionRequestTimedOut or
// netcode.ErrConnectionResponseTimedOut), at once with an error wrapping
// netcode.ErrInvalidConnectToken for a bad token, with ErrPeerClosed if
// the server disconnects the client before Dial returns, or with ctx's
// error.
func Dial(ctx context.Context, token []byte, cfg ClientConfig) (*Conn, error) {
	if err := ctx.Err(); err != nil {
		if cfg.Conn != nil {
			cfg.Conn.Close()
		}
		return nil, err
	}
	cfg.defaults()
	cfg.Netcode.Logger = cfg.Logger
	tc := cfg.Conn
	if tc == nil {
		network := "udp"
		var ct netcode.ConnectToken
		if _, err := netcode.ParseConnectToken(token, &ct); err == nil && allIPv4(ct.ServerAddresses) {
			network = "udp4"
		}
		uc, err := transport.ListenUDP(network, ":0", transport.UDPConfig{Logger: cfg.Logger})
		if err != nil {
			return nil, err
		}
		tc = uc
	}
	nc, err := netcode.NewClient(cfg.Netcode)
	if err == nil {
		if _, err = newCore(&cfg.ConnConfig, cfg.Logger, time.Now()); err == nil {
			err = nc.Connect(token, time.Now())
		}
	}
	if err != nil {
		tc.Close()
		return nil, err
	}
	cl := &client{
		cfg: cfg, log: cfg.Logger, tc: tc, nc: nc, loop: driver.NewLoop(),
		changed: make(chan struct{}, 1), stop: make(chan struct{}), readDone: make(chan struct{}),
	}
	cl.mu.Lock()
	cl.flushLocked()
	cl.mu.Unlock()
	cl.h = cl.loop.Add(cl)
	cl.h.WakeBy(time.Now())
	go cl.read()

	for {
		cl.mu.Lock()
		st, c, failed := cl.nc.State(), cl.conn, cl.failed
		cl.mu.Unlock()
		switch {
		case c != nil:
			return c, nil
		case failed != nil:
			cl.shutdown()
			return nil, failed
		case st <= netcode.ClientDisconnected:
			cl.shutdown()
			return nil, st.Err()
		}
		select {
		case <-cl.changed:
		case <-ctx.Done():
			cl.mu.Lock()
			cl.nc.Disconnect(time.Now())
			cl.flushLocked()
			cl.mu.Unlock()
			cl.shutdown()
			return nil, ctx.Err()
		}
	}
}

func allIPv4(list []netip.AddrPort) bool {
	for _, a := range list {
		if !a.Addr().Unmap().Is4() {
			return false
		}
	}
	return len(list) > 0
}

// Run runs the netcode client's timers on the loop.
func (cl *client) Run(now time.Time) time.Time {
	cl.mu.Lock()
	cl.nc.Update(now)
	cl.afterLocked(now)
	next := cl.nc.NextTimeout()
	cl.unlockAndSettle()
	return next
}

func (cl *client) read() {
	defer close(cl.readDone)
	r := driver.Reader{Conn: cl.tc, Stop: cl.stop, Handle: cl.receive}
	err := r.Run()
	if err == nil {
		return
	}
	cl.log.Warn().Err(err).Msg("session: client giving up on its socket")
	cl.mu.Lock()
	cl.failed = err
	cl.nc.Disconnect(time.Now())
	cl.flushLocked()
	if c := cl.conn; c != nil && !c.gone {
		cl.later(c, c.peerLeftLocked(time.Now(), err))
	}
	cl.unlockAndSettle()
	driver.Poke(cl.changed)
}

func (cl *client) receive(b []byte, from netip.AddrPort) {
	now := time.Now()
	cl.mu.Lock()
	cl.nc.Receive(b, from, now)
	cl.afterLocked(now)
	next := cl.nc.NextTimeout()
	cl.unlockAndSettle()
	cl.h.WakeBy(next)
}

// afterLocked sends what the netcode client queued, creates the
// connection once connected, hands it the payloads, and ends it when
// netcode's connection ends.
func (cl *client) afterLocked(now time.Time) {
	st := cl.nc.State()
	if st == netcode.ClientConnected && cl.conn == nil {
		cl.connectedLocked(now)
	}
	if c := cl.conn; c != nil && !c.gone {
		for {
			p, _, ok := cl.nc.ReceivePayload()
			if !ok {
				break
			}
			cl.later(c, c.ep.StepLocked(now, func(core *endpoint.Core, now time.Time) { core.Receive(p, now) }))
		}
		if st != netcode.ClientConnected {
			reason := ErrPeerClosed
			if st == netcode.ClientConnectionTimedOut {
				reason = ErrTimedOut
			}
			cl.log.Debug().AnErr("reason", reason).Msg("session: disconnected")
			cl.later(c, c.peerLeftLocked(now, reason))
		}
	}
	cl.flushLocked()
	driver.Poke(cl.changed)
}

func (cl *client) connectedLocked(now time.Time) {
	core, err := newCore(&cl.cfg.ConnConfig, cl.log, now)
	if err != nil {
		return // checked in Dial
	}
	server := cl.nc.ServerAddress()
	c := &Conn{mu: &cl.mu, index: cl.nc.ClientIndex()}
	c.stats = func() Stats { return clientStats(cl.nc.Stats()) }
	c.leave = func(now time.Time) {
		cl.nc.Disconnect(now)
		cl.flushLocked()
	}
	c.ep = endpoint.NewConn(core, endpoint.ConnConfig{
		Net: "session", Local: cl.tc.LocalAddr(), Remote: server, Lock: &cl.mu,
		CloseTimeout: cl.cfg.CloseTimeout, MaxMessage: cl.cfg.maxMessage(),
		Hooks: endpoint.Hooks{
			Emit: func(b []byte) {
				if !c.gone && cl.nc.SendPayload(b) == nil {
					cl.flushLocked()
				}
			},
			Ended: func(err error) {
				c.ended(err)
				cl.shutdownSoon()
			},
		},
	})
	cl.conn = c
	c.ep.Start(cl.loop)
	cl.log.Debug().Int("client_index", c.index).Stringer("server", server).Msg("session: connected")
	cl.later(c, c.ep.StepLocked(now, nil))
}

func clientStats(st netcode.ClientStats) Stats {
	return Stats{
		PacketsSent: st.PacketsSent, PacketsReceived: st.PacketsReceived,
		PayloadsSent: st.PayloadsSent, PayloadsReceived: st.PayloadsReceived,
		KeepAlivesSent: st.KeepAlivesSent, KeepAlivesReceived: st.KeepAlivesReceived,
		PacketsDropped: st.Dropped.Total(),
	}
}

func (cl *client) flushLocked() {
	for _, d := range cl.nc.Outgoing() {
		cl.tc.WriteTo(d.Data, d.Addr)
	}
}

// shutdownSoon releases the socket and goroutines once the connection
// has ended; it runs on the loop, so it does not wait for the loop.
func (cl *client) shutdownSoon() {
	close(cl.stop)
	cl.tc.Close()
	cl.loop.StopSoon()
}

// shutdown releases everything when Dial fails, and waits.
func (cl *client) shutdown() {
	close(cl.stop)
	cl.tc.Close()
	cl.loop.Stop()
	<-cl.readDone
}
