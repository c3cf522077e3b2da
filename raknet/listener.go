package raknet

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/netrak/netrak/internal/driver"
	"github.com/netrak/netrak/internal/endpoint"
	"github.com/netrak/netrak/reliability"
	"github.com/netrak/netrak/transport"
)

// Listener defaults.
const (
	DefaultMaxConnections = 1024
	// DefaultAcceptBacklog is how many connections may wait for Accept.
	DefaultAcceptBacklog = 128
	// DefaultMaxPending bounds connections created by request 2 that have
	// not finished the online handshake.
	DefaultMaxPending = 256
)

// ListenConfig configures a Listener. The zero value is ready to use and
// suits Minecraft Bedrock clients.
type ListenConfig struct {
	// Conn, if set, is the endpoint to serve on (for example a
	// transport/simnet endpoint in tests); Listen's network and address
	// are then ignored. The Listener owns it and closes it on Close.
	Conn transport.Conn
	// GUID is the server's RakNet GUID; 0 means a random one.
	GUID uint64
	// Protocols are the protocol versions accepted; empty means
	// {ProtocolBedrock} (11). Add ProtocolOriginal (6) for peers built on
	// the original C++ library, 10 for older Bedrock clients.
	Protocols []uint8
	// MTU is the largest MTU the server agrees to, reliability.MinMTU to
	// MaxMTU; 0 means MaxMTU (1492).
	MTU int
	// DisableCookies turns off the cookie in open connection reply 1.
	// With cookies (the default) a connection is only created for a
	// request 2 that echoes a cookie sent to its source address, so
	// spoofed sources cannot create state.
	DisableCookies bool
	// MaxConnections bounds open connections, pending ones included; past
	// it request 2 is refused with "no free incoming connections". 0 means
	// DefaultMaxConnections.
	MaxConnections int
	// MaxPending bounds connections still in the online handshake; 0
	// means DefaultMaxPending.
	MaxPending int
	// AcceptBacklog bounds connections waiting for Accept; past it, new
	// connections are closed. 0 means DefaultAcceptBacklog.
	AcceptBacklog int
	// PongData is sent in unconnected pongs; SetPongData changes it at run
	// time. PongEncoding says how (default length-prefixed, as Bedrock).
	PongData     []byte
	PongEncoding PongEncoding
	// OfflineRate and OfflineBurst limit offline messages (pings, open
	// connection requests) per source address: a token bucket refilled at
	// OfflineRate per second holding OfflineBurst. 0 means
	// DefaultOfflineRate and DefaultOfflineBurst.
	OfflineRate  float64
	OfflineBurst int
	// GarbageStrikes malformed offline messages from one IP block it for
	// BlockDuration. 0 means DefaultGarbageStrikes and
	// DefaultBlockDuration.
	GarbageStrikes int
	BlockDuration  time.Duration
	// MaxSources bounds the per-source tables of the rate limiter and the
	// block list; 0 means DefaultMaxSources.
	MaxSources int
	// CookieRotation is how often the cookie key changes; 0 means
	// DefaultCookieRotation.
	CookieRotation time.Duration
	// ConnConfig configures every connection the listener accepts, and
	// its Logger the listener too.
	ConnConfig
}

// ListenerStats counts what a Listener did with datagrams that belong to
// no connection, by reason.
type ListenerStats struct {
	Pings               uint64 // unconnected pings answered
	OpenRequests        uint64 // request 1 answered
	Connections         uint64 // connections created by request 2
	Accepted            uint64 // connections handed to Accept
	RefusedFull         uint64 // request 2 refused: MaxConnections or MaxPending
	RefusedDuplicate    uint64 // request 2 refused: address or GUID already connected
	IncompatibleVersion uint64 // request 1 with a protocol not accepted
	BacklogOverflow     uint64 // connections closed because Accept did not keep up
	RateLimited         uint64 // offline messages over the per-source rate
	Blocked             uint64 // datagrams from blocked sources
	SourcesBlocked      uint64 // times a source was put on the block list
	Malformed           uint64 // offline messages that did not parse
	UnknownID           uint64 // offline messages with an identifier we do not serve
	BadCookie           uint64 // request 2 with a wrong cookie
	SmallProbe          uint64 // request 1 or 2 below the minimum MTU
	Unsupported         uint64 // libcat security requested
	StrayDatagrams      uint64 // connected datagrams from unknown sources
	ReadErrors          uint64 // transient socket read errors
}

// listenerCounters back ListenerStats: what admission decided, by event,
// and what only the driver sees.
type listenerCounters struct {
	events [numEvents]atomic.Uint64

	connections, accepted, backlogOverflow, sourcesBlocked, readErrors atomic.Uint64
}

// Listener accepts RakNet connections on one datagram endpoint. It
// implements net.Listener. One goroutine reads the endpoint and hands
// each datagram to the connection of its source address or, from a
// stranger, to a sans-I/O core that applies the admission rules (see
// ListenConfig); the Listener sends that core's answers and starts the
// connections it admits.
type Listener struct {
	cfg     ListenConfig
	tc      transport.Conn
	local   netip.AddrPort
	log     zerolog.Logger
	guid    uint64
	counter listenerCounters

	// Only the reader goroutine uses these, but for adm's pong data,
	// which SetPongData replaces atomically.
	adm *admission
	out []byte

	mu      sync.Mutex
	conns   map[netip.AddrPort]*Conn
	guids   map[uint64]*Conn
	pending int
	closed  bool

	loop       *driver.Loop // runs every connection's timers
	backlog    *endpoint.Backlog[*Conn]
	readerDone chan struct{}
	closeOnce  sync.Once
}

var _ net.Listener = (*Listener)(nil)

// Listen opens a UDP socket on address ("host:port"; network "udp",
// "udp4" or "udp6") and accepts RakNet connections on it.
func Listen(network, address string, cfg ListenConfig) (*Listener, error) {
	return cfg.Listen(context.Background(), network, address)
}

// Listen is like the package function Listen; ctx is for symmetry with
// net.ListenConfig and only checked before the socket opens.
func (cfg ListenConfig) Listen(ctx context.Context, network, address string) (*Listener, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if cfg.Conn == nil {
		uc, err := transport.ListenUDP(network, address, transport.UDPConfig{Logger: cfg.Logger})
		if err != nil {
			return nil, fmt.Errorf("raknet: listen: %w", err)
		}
		cfg.Conn = uc
	}
	l, err := newListener(cfg)
	if err != nil {
		cfg.Conn.Close()
		return nil, err
	}
	return l, nil
}

// withDefaults fills in the zero settings and checks the MTU.
func (cfg ListenConfig) withDefaults() (ListenConfig, error) {
	if len(cfg.Protocols) == 0 {
		cfg.Protocols = []uint8{ProtocolBedrock}
	}
	cfg.MTU = orDefault(cfg.MTU, MaxMTU)
	if cfg.MTU < reliability.MinMTU || cfg.MTU > MaxMTU {
		return cfg, fmt.Errorf("raknet: listen: MTU %d outside %d..%d", cfg.MTU, reliability.MinMTU, MaxMTU)
	}
	cfg.MaxConnections = orDefault(cfg.MaxConnections, DefaultMaxConnections)
	cfg.MaxPending = orDefault(cfg.MaxPending, DefaultMaxPending)
	cfg.AcceptBacklog = orDefault(cfg.AcceptBacklog, DefaultAcceptBacklog)
	cfg.OfflineBurst = orDefault(cfg.OfflineBurst, DefaultOfflineBurst)
	cfg.GarbageStrikes = orDefault(cfg.GarbageStrikes, DefaultGarbageStrikes)
	cfg.MaxSources = orDefault(cfg.MaxSources, DefaultMaxSources)
	if cfg.OfflineRate <= 0 {
		cfg.OfflineRate = DefaultOfflineRate
	}
	cfg.BlockDuration = orDefault(cfg.BlockDuration, DefaultBlockDuration)
	cfg.CookieRotation = orDefault(cfg.CookieRotation, DefaultCookieRotation)
	if cfg.GUID == 0 {
		cfg.GUID = randomGUID()
	}
	return cfg, nil
}

func newListener(cfg ListenConfig) (*Listener, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if _, err := reliability.New(engineConfig(cfg.Reliability, cfg.MTU, cfg.Logger)); err != nil {
		return nil, fmt.Errorf("raknet: listen: %w", err)
	}
	l := &Listener{
		cfg:        cfg,
		tc:         cfg.Conn,
		local:      cfg.Conn.LocalAddr(),
		log:        cfg.Logger,
		guid:       cfg.GUID,
		conns:      make(map[netip.AddrPort]*Conn),
		guids:      make(map[uint64]*Conn),
		readerDone: make(chan struct{}),
	}
	l.backlog = endpoint.NewBacklog[*Conn](cfg.AcceptBacklog, "raknet", l.Addr())
	if l.adm, err = newAdmission(&cfg, l); err != nil {
		return nil, err
	}
	l.loop = driver.NewLoop()
	go l.read()
	return l, nil
}

// read is the reader goroutine. Transient errors (ICMP port unreachable
// on some systems) do not end the listener; reads that keep failing do:
// the listener closes, and Accept reports the transport's error.
func (l *Listener) read() {
	defer close(l.readerDone)
	r := driver.Reader{
		Conn: l.tc,
		Stop: l.backlog.Done(),
		Handle: func(b []byte, from netip.AddrPort) {
			l.handle(b, from, time.Now())
		},
		OnError: func(err error) {
			l.counter.readErrors.Add(1)
			l.log.Debug().Err(err).Msg("raknet: listener read error")
		},
	}
	if err := r.Run(); err != nil {
		l.log.Warn().Err(err).Msg("raknet: listener giving up on its socket")
		l.backlog.Close(err) // before Close, so that Accept reports why
		go l.Close()
	}
}

// handle dispatches one datagram: to the connection of its source, or to
// admission.
func (l *Listener) handle(b []byte, from netip.AddrPort, now time.Time) {
	if len(b) > 0 && !IsOffline(b) {
		l.mu.Lock()
		c := l.conns[from]
		l.mu.Unlock()
		if c != nil {
			c.receive(b)
			return
		}
	}
	out, v := l.adm.receive(l.out[:0], b, from, now)
	l.out = out[:0]
	if v.event == evAdmit && !l.start(v.admit, from, now) {
		out = out[:0]
	}
	// Counted before the reply goes out, so that a peer that has its
	// answer finds it in Stats.
	l.counter.events[v.event].Add(1)
	if v.blocked {
		l.counter.sourcesBlocked.Add(1)
		l.log.Debug().Stringer("source", from.Addr()).Msg("raknet: source blocked for sending garbage")
	}
	if len(out) > 0 {
		if err := l.tc.WriteTo(out, from); err != nil {
			l.log.Debug().Err(err).Stringer("to", from).Msg("raknet: offline reply failed")
		}
	}
}

// start creates and registers the connection admission admitted, and
// reports whether it did.
func (l *Listener) start(a admitted, from netip.AddrPort, now time.Time) bool {
	p := l.cfg.params(int(a.mtu))
	p.tc, p.listener, p.remoteGUID = l.tc, l, a.guid
	p.online.guid, p.online.local, p.online.remote, p.online.protocol = l.guid, l.local, from, a.protocol
	c, err := newConn(p, now)
	if err != nil {
		l.log.Debug().Err(err).Msg("raknet: cannot create connection")
		return false
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return false
	}
	l.conns[from] = c
	l.guids[a.guid] = c
	c.counted = true
	l.pending++
	l.mu.Unlock()
	l.counter.connections.Add(1)
	c.ep.Start(l.loop)
	return true
}

// peer, guidInUse and load answer admission from the connection map.

func (l *Listener) peer(addr netip.AddrPort) (peerInfo, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.conns[addr]
	if c == nil {
		return peerInfo{}, false
	}
	return peerInfo{guid: c.remoteGUID, mtu: uint16(c.MTU()), up: c.isUp()}, true
}

func (l *Listener) guidInUse(guid uint64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.guids[guid] != nil
}

func (l *Listener) load() (conns, pending int, closed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns), l.pending, l.closed
}

// ready hands a connection that finished its handshake to Accept.
func (l *Listener) ready(c *Conn) {
	l.mu.Lock()
	if c.counted {
		c.counted = false
		l.pending--
	}
	closed := l.closed
	l.mu.Unlock()
	if closed {
		go c.Close()
		return
	}
	if l.backlog.Offer(c) {
		l.counter.accepted.Add(1)
	} else {
		l.counter.backlogOverflow.Add(1)
		go c.Close()
	}
}

// remove forgets a connection that ended.
func (l *Listener) remove(c *Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if remote := c.o.cfg.remote; l.conns[remote] == c {
		delete(l.conns, remote)
	}
	if l.guids[c.remoteGUID] == c {
		delete(l.guids, c.remoteGUID)
	}
	if c.counted {
		c.counted = false
		l.pending--
	}
}

// Accept waits for the next connection that completed its handshake.
// After Close it fails with net.ErrClosed, or with an error wrapping
// ErrTransportFailed if the listener closed because reads from its socket
// kept failing.
func (l *Listener) Accept() (net.Conn, error) {
	c, err := l.AcceptConn(context.Background())
	if err != nil {
		return nil, err
	}
	return c, nil
}

// AcceptConn is Accept returning the *Conn, and giving up when ctx ends.
func (l *Listener) AcceptConn(ctx context.Context) (*Conn, error) {
	return l.backlog.Accept(ctx)
}

// Close stops accepting, closes every connection of the listener
// gracefully (they share its socket) and then the socket. It waits up to
// the close timeout for the connections' peers, and returns once every
// connection's goroutine has finished.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() {
		l.mu.Lock()
		l.closed = true
		conns := make([]*Conn, 0, len(l.conns))
		for _, c := range l.conns {
			conns = append(conns, c)
		}
		l.mu.Unlock()
		// Connections waiting in the backlog were never accepted; they are
		// in conns too.
		l.backlog.Close(nil)
		var wg sync.WaitGroup
		for _, c := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.Close()
				// A connection lingering for a peer that closed first has
				// no socket left to linger on.
				c.abort(nil)
			}()
		}
		wg.Wait()
		l.loop.Stop()
		l.tc.Close()
		<-l.readerDone
	})
	return nil
}

// Addr returns the listener's UDP address.
func (l *Listener) Addr() net.Addr { return net.UDPAddrFromAddrPort(l.local) }

// GUID is the server's RakNet GUID.
func (l *Listener) GUID() uint64 { return l.guid }

// SetPongData changes what unconnected pongs carry, effective for the next
// ping. It fails with ErrPongDataTooLong past MaxPongDataLen.
func (l *Listener) SetPongData(data []byte) error { return l.adm.setPongData(data) }

// Stats returns the listener's counters.
func (l *Listener) Stats() ListenerStats {
	c := &l.counter
	ev := func(e event) uint64 { return c.events[e].Load() }
	return ListenerStats{
		Pings: ev(evPing), OpenRequests: ev(evOpenRequest), Connections: c.connections.Load(),
		Accepted: c.accepted.Load(), RefusedFull: ev(evRefusedFull), RefusedDuplicate: ev(evRefusedDuplicate),
		IncompatibleVersion: ev(evIncompatible), BacklogOverflow: c.backlogOverflow.Load(),
		RateLimited: ev(evRateLimited), Blocked: ev(evBlocked), SourcesBlocked: c.sourcesBlocked.Load(),
		Malformed: ev(evMalformed), UnknownID: ev(evUnknownID), BadCookie: ev(evBadCookie),
		SmallProbe: ev(evSmallProbe), Unsupported: ev(evUnsupported), StrayDatagrams: ev(evStray),
		ReadErrors: c.readErrors.Load(),
	}
}

// NumConns is the number of open connections, pending ones included.
func (l *Listener) NumConns() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}
