package relay

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/netrak/netrak/transport"
	"github.com/netrak/netrak/transport/internal/delay"
)

// Defaults for zero Config fields.
const (
	DefaultMaxClients  = 1024
	DefaultIdleTimeout = 2 * time.Minute
)

// maxDatagram is the read buffer size: the largest UDP payload.
const maxDatagram = 65535

// ErrAlreadyRun is returned by Run when called more than once.
var ErrAlreadyRun = errors.New("relay: Run called twice")

// Config configures a Relay. Listen and Target are required; every other
// zero field has a documented default.
type Config struct {
	// Listen is the UDP address clients send to, e.g. "127.0.0.1:19000".
	// Port 0 picks a free port; see Relay.Addr.
	Listen string
	// Target is where client traffic goes, e.g. a game server.
	Target netip.AddrPort
	// Up applies to datagrams from clients to the target, Down to the
	// replies. The zero Impairment relays untouched.
	Up, Down transport.Impairment
	// Seed seeds the impairment PRNGs, one per direction.
	Seed uint64
	// MaxClients bounds the client table, and so the number of upstream
	// sockets (DefaultMaxClients if 0). Datagrams from further clients are
	// dropped and counted until an idle one expires.
	MaxClients int
	// IdleTimeout is how long a client may send and receive nothing before
	// its upstream socket is closed (DefaultIdleTimeout if 0).
	IdleTimeout time.Duration
	// MaxInFlight bounds the datagrams held back for delay, both directions
	// together (64Ki if 0); more are dropped as DroppedQueue.
	MaxInFlight int
	// UDP configures the listen socket and the upstream sockets (buffer
	// sizes, DSCP). Its Logger is replaced by Logger.
	UDP transport.UDPConfig
	// Logger gets client arrivals and expiries at debug level. The zero
	// value is silent.
	Logger zerolog.Logger
}

// Stats are a relay's counters.
type Stats struct {
	// Up counts datagrams from clients to the target, Down the replies.
	Up, Down transport.ImpairmentStats
	// Clients is the number of clients in the table now.
	Clients int
	// ClientsSeen counts clients ever added to the table.
	ClientsSeen uint64
	// ClientsExpired counts clients removed after IdleTimeout.
	ClientsExpired uint64
	// Rejected counts datagrams dropped because the client table was full.
	Rejected uint64
	// Foreign counts datagrams dropped because they reached an upstream
	// socket from an address other than the target.
	Foreign uint64
}

func (s Stats) String() string {
	return fmt.Sprintf("up:   %v\ndown: %v\nclients: now=%d seen=%d expired=%d rejected-datagrams=%d foreign-datagrams=%d",
		s.Up, s.Down, s.Clients, s.ClientsSeen, s.ClientsExpired, s.Rejected, s.Foreign)
}

// Relay forwards UDP datagrams between clients and one target, impairing
// each direction. Each client source address gets its own upstream socket,
// so the target sees one peer per client, as it would without the relay.
type Relay struct {
	cfg             Config
	log             zerolog.Logger
	listen          *transport.UDPConn
	target          netip.AddrPort
	upstreamNetwork string // "udp4" or "udp6", matching the target
	up, down        *transport.Shaper
	queue           *delay.Queue[outbound]
	started         atomic.Bool

	upCounters, downCounters         transport.ImpairmentCounters
	seen, expired, rejected, foreign atomic.Uint64

	mu      sync.Mutex
	clients map[netip.AddrPort]*client
	closed  bool
	readers sync.WaitGroup
}

type client struct {
	addr     netip.AddrPort
	upstream *transport.UDPConn
	lastSeen atomic.Int64 // nanoseconds since the relay's epoch
}

// outbound is a datagram waiting for its delivery time.
type outbound struct {
	via      *transport.UDPConn
	to       netip.AddrPort
	buf      *[]byte
	counters *transport.ImpairmentCounters
}

// epoch anchors client activity times on the monotonic clock.
var epoch = time.Now()

// New opens the listen socket. Call Run to start relaying.
func New(cfg Config) (*Relay, error) {
	if !cfg.Target.IsValid() {
		return nil, fmt.Errorf("relay: invalid target %v", cfg.Target)
	}
	if err := errors.Join(cfg.Up.Validate(), cfg.Down.Validate()); err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	if cfg.MaxClients <= 0 {
		cfg.MaxClients = DefaultMaxClients
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	cfg.UDP.Logger = cfg.Logger
	listen, err := transport.ListenUDP("udp", cfg.Listen, cfg.UDP)
	if err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	r := &Relay{
		cfg:     cfg,
		log:     cfg.Logger,
		listen:  listen,
		target:  netip.AddrPortFrom(cfg.Target.Addr().Unmap(), cfg.Target.Port()),
		clients: make(map[netip.AddrPort]*client),
	}
	r.upstreamNetwork = "udp6"
	if r.target.Addr().Is4() {
		r.upstreamNetwork = "udp4"
	}
	r.up = transport.NewShaper(cfg.Up, cfg.Seed, 1, &r.upCounters)
	r.down = transport.NewShaper(cfg.Down, cfg.Seed, 2, &r.downCounters)
	r.queue = delay.New(cfg.MaxInFlight, r.deliver, func(o outbound) { delay.Release(o.buf) })
	return r, nil
}

// Addr is the address clients send to.
func (r *Relay) Addr() netip.AddrPort { return r.listen.LocalAddr() }

// SetImpairment changes both directions' impairments for datagrams relayed
// from now on.
func (r *Relay) SetImpairment(up, down transport.Impairment) {
	r.up.SetImpairment(up)
	r.down.SetImpairment(down)
}

// Stats returns the relay's counters.
func (r *Relay) Stats() Stats {
	r.mu.Lock()
	n := len(r.clients)
	r.mu.Unlock()
	return Stats{
		Up:             r.upCounters.Snapshot(),
		Down:           r.downCounters.Snapshot(),
		Clients:        n,
		ClientsSeen:    r.seen.Load(),
		ClientsExpired: r.expired.Load(),
		Rejected:       r.rejected.Load(),
		Foreign:        r.foreign.Load(),
	}
}

// Run relays until ctx ends, then closes every socket, discards datagrams
// still held back, and returns nil. It returns an error if the listen
// socket fails, or ErrAlreadyRun on a second call.
func (r *Relay) Run(ctx context.Context) error {
	if r.started.Swap(true) {
		return ErrAlreadyRun
	}
	stop := context.AfterFunc(ctx, r.shutdown)
	defer stop()

	janitorCtx, stopJanitor := context.WithCancel(ctx)
	janitorDone := make(chan struct{})
	go func() {
		defer close(janitorDone)
		r.janitor(janitorCtx)
	}()

	err := r.serveClients()
	r.shutdown()
	stopJanitor()
	<-janitorDone
	r.readers.Wait()
	// shutdown may be running on the context's goroutine; closing the queue
	// here as well waits out a delivery in progress, so the counters are
	// final when Run returns.
	r.queue.Close()
	if ctx.Err() != nil && errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// Close closes the relay's sockets without a Run, or stops a Run in
// progress (which then returns an error wrapping net.ErrClosed).
func (r *Relay) Close() error {
	r.shutdown()
	return nil
}

// shutdown closes every socket, which ends every reader.
func (r *Relay) shutdown() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.closed = true
	clients := r.clients
	r.clients = map[netip.AddrPort]*client{}
	r.mu.Unlock()
	r.listen.Close()
	for _, c := range clients {
		c.upstream.Close()
	}
	r.queue.Close()
}

// serveClients reads from clients until the listen socket closes.
func (r *Relay) serveClients() error {
	buf := make([]byte, maxDatagram)
	for {
		n, from, err := r.listen.ReadFrom(buf)
		if err != nil {
			return err
		}
		c := r.client(from)
		if c == nil {
			continue
		}
		c.lastSeen.Store(int64(time.Since(epoch)))
		r.forward(r.up, &r.upCounters, c.upstream, r.target, buf[:n])
	}
}

// client returns the table entry for addr, creating it and its upstream
// socket if there is room.
func (r *Relay) client(addr netip.AddrPort) *client {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.clients[addr]; ok {
		return c
	}
	if r.closed {
		return nil
	}
	if len(r.clients) >= r.cfg.MaxClients {
		r.rejected.Add(1)
		return nil
	}
	upstream, err := transport.ListenUDP(r.upstreamNetwork, ":0", r.cfg.UDP)
	if err != nil {
		r.log.Warn().Err(err).Stringer("client", addr).Msg("relay: cannot open upstream socket")
		r.rejected.Add(1)
		return nil
	}
	c := &client{addr: addr, upstream: upstream}
	r.clients[addr] = c
	r.seen.Add(1)
	r.log.Debug().Stringer("client", addr).Stringer("upstream", upstream.LocalAddr()).Msg("relay: new client")
	r.readers.Go(func() { r.serveUpstream(c) })
	return c
}

// serveUpstream relays the target's replies to one client until the
// client's upstream socket closes.
func (r *Relay) serveUpstream(c *client) {
	buf := make([]byte, maxDatagram)
	for {
		n, from, err := c.upstream.ReadFrom(buf)
		if err != nil {
			return
		}
		if from != r.target {
			r.foreign.Add(1)
			continue
		}
		c.lastSeen.Store(int64(time.Since(epoch)))
		r.forward(r.down, &r.downCounters, r.listen, c.addr, buf[:n])
	}
}

// forward applies a direction's impairment to p and schedules its copies.
func (r *Relay) forward(s *transport.Shaper, counters *transport.ImpairmentCounters, via *transport.UDPConn, to netip.AddrPort, p []byte) {
	now := time.Now()
	fate := s.Decide(now, len(p))
	for i := range fate.Copies {
		o := outbound{via: via, to: to, buf: delay.Copy(p), counters: counters}
		if !r.queue.Schedule(now.Add(fate.Delay[i]), o) {
			delay.Release(o.buf)
			counters.DroppedQueue.Add(1)
		}
	}
}

// deliver sends a datagram whose time has come.
func (r *Relay) deliver(o outbound) {
	if err := o.via.WriteTo(*o.buf, o.to); err != nil {
		o.counters.DroppedUnreachable.Add(1)
	} else {
		o.counters.Delivered.Add(1)
		o.counters.DeliveredBytes.Add(uint64(len(*o.buf)))
	}
	delay.Release(o.buf)
}

// janitor expires idle clients until ctx ends.
func (r *Relay) janitor(ctx context.Context) {
	t := time.NewTicker(max(r.cfg.IdleTimeout/4, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.expireIdle(time.Now())
		}
	}
}

// expireIdle removes clients idle for IdleTimeout as of now.
func (r *Relay) expireIdle(now time.Time) {
	cutoff := int64(now.Sub(epoch) - r.cfg.IdleTimeout)
	var idle []*client
	r.mu.Lock()
	for addr, c := range r.clients {
		if c.lastSeen.Load() <= cutoff {
			idle = append(idle, c)
			delete(r.clients, addr)
		}
	}
	r.mu.Unlock()
	for _, c := range idle {
		c.upstream.Close()
		r.expired.Add(1)
		r.log.Debug().Stringer("client", c.addr).Msg("relay: client expired")
	}
}
