package raknet

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"time"

	"github.com/rs/zerolog"

	"github.com/netrak/netrak/transport"
)

// PingResult is a server's answer to an unconnected ping.
type PingResult struct {
	// GUID is the server's RakNet GUID.
	GUID uint64
	// RTT is the time from sending the ping that was answered to receiving
	// its pong.
	RTT time.Duration
	// Data is the pong data, for Bedrock servers a MOTD (see
	// ParseBedrockMOTD).
	Data []byte
	// Encoding is how the server framed Data.
	Encoding PongEncoding
}

// DefaultPingInterval is how long Ping waits for a pong before it sends the
// ping again.
const DefaultPingInterval = time.Second

// pingSocketBuffer sizes the socket Ping opens: a few pongs at most are in
// flight, so the large defaults of a connection's socket are not needed.
const pingSocketBuffer = 64 << 10

// PingConfig configures a ping. The zero value is ready to use.
type PingConfig struct {
	// Conn is the endpoint to ping from. Ping reads from it and manages its
	// read deadline for the duration of the call, so nothing else may read
	// from it meanwhile; Ping does not close it. If nil, Ping opens a UDP
	// socket on an ephemeral port and closes it afterwards.
	Conn transport.Conn
	// GUID is the client GUID sent in the ping; zero means a random one.
	GUID uint64
	// Interval is the time between resends of the ping; zero means
	// DefaultPingInterval.
	Interval time.Duration
	// OpenConnectionsOnly sends ping 0x02, which servers answer only while
	// they accept connections, instead of 0x01.
	OpenConnectionsOnly bool
	// Logger receives debug messages about ignored datagrams; the zero
	// value is silent.
	Logger zerolog.Logger
}

// Ping sends unconnected pings to the RakNet server at address ("host:port")
// until one is answered or ctx ends, and returns the server's GUID, the
// round-trip time and its pong data. It reads both pong encodings. Without
// a deadline on ctx, Ping keeps trying until ctx is cancelled.
func Ping(ctx context.Context, address string) (PingResult, error) {
	var c PingConfig
	return c.PingAddress(ctx, address)
}

// PingAddress resolves address ("host:port") and pings it; see Ping.
func (c *PingConfig) PingAddress(ctx context.Context, address string) (PingResult, error) {
	addr, err := resolveUDP(ctx, address)
	if err != nil {
		return PingResult{}, fmt.Errorf("raknet: ping %s: %w", address, err)
	}
	return c.Ping(ctx, addr)
}

// Ping sends unconnected pings to addr every c.Interval until a pong from
// addr arrives or ctx ends. Datagrams from other sources and anything that
// is not a pong to one of its pings are ignored. When ctx ends first the
// error wraps ctx.Err().
func (c *PingConfig) Ping(ctx context.Context, addr netip.AddrPort) (PingResult, error) {
	addr = netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port())
	conn := c.Conn
	if conn == nil {
		network := "udp4"
		if addr.Addr().Is6() {
			network = "udp6"
		}
		uc, err := transport.ListenUDP(network, ":0", transport.UDPConfig{ReadBuffer: pingSocketBuffer, WriteBuffer: pingSocketBuffer, Logger: c.Logger})
		if err != nil {
			return PingResult{}, fmt.Errorf("raknet: ping %v: %w", addr, err)
		}
		defer uc.Close()
		conn = uc
	}
	guid := c.GUID
	if guid == 0 {
		guid = randomGUID()
	}
	interval := c.Interval
	if interval <= 0 {
		interval = DefaultPingInterval
	}
	p := &pinger{target: addr, guid: guid, interval: interval, openOnly: c.OpenConnectionsOnly}
	res, err := drivePing(ctx, conn, p, c.Logger)
	if err != nil {
		return PingResult{}, fmt.Errorf("raknet: ping %v: %w", addr, err)
	}
	return res, nil
}

// drivePing runs p over conn: it sends when p asks, waits for datagrams
// until p's next resend time, and hands them to p.
func drivePing(ctx context.Context, conn transport.Conn, p *pinger, log zerolog.Logger) (PingResult, error) {
	if err := ctx.Err(); err != nil {
		return PingResult{}, err
	}
	// The read deadline wakes the loop for its next send and is moved
	// into the past when ctx ends, so that a blocked read returns.
	waker := newReadWaker(ctx, conn)
	defer waker.release()

	buf := make([]byte, 4096)
	var out []byte
	deadline, hasDeadline := ctx.Deadline()
	for {
		now := time.Now()
		// Checked here as well as through ctx because the context's timer
		// and the read deadline may fire at the same instant in either
		// order; no ping goes out once the deadline has passed.
		if hasDeadline && !now.Before(deadline) {
			return PingResult{}, context.DeadlineExceeded
		}
		var wake time.Time
		out, wake = p.poll(now, out[:0])
		if len(out) > 0 {
			if err := conn.WriteTo(out, p.target); err != nil {
				return PingResult{}, err
			}
		}
		waker.wakeAt(wake)
		n, from, err := conn.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				if err := ctx.Err(); err != nil {
					return PingResult{}, err
				}
				continue
			}
			return PingResult{}, err
		}
		res, ok := p.receive(buf[:n], from, time.Now())
		if ok {
			return res, nil
		}
		log.Debug().Stringer("from", from).Int("len", n).Msg("raknet: ping ignored a datagram")
	}
}

// pinger is the sans-I/O core of Ping: it decides when to send a ping and
// recognises the pong that answers one.
type pinger struct {
	target   netip.AddrPort
	guid     uint64
	interval time.Duration
	openOnly bool

	next  time.Time // when to send the next ping; zero means now
	token uint64    // SendTime of the latest ping
	// sent remembers the latest pings, so that a late pong to an earlier
	// ping is still accepted and yields that ping's true RTT.
	sent  [8]sentPing
	nsent int
}

type sentPing struct {
	token uint64
	at    time.Time
}

// poll appends a ping to b if one is due at now, and returns when poll
// wants to be called next.
func (p *pinger) poll(now time.Time, b []byte) ([]byte, time.Time) {
	if !p.next.IsZero() && now.Before(p.next) {
		return b, p.next
	}
	// Tokens count up from a start derived from the clock, as RakNet's send
	// times do, but are unique per ping even within one millisecond.
	if t := uint64(now.UnixMilli()); t > p.token {
		p.token = t
	} else {
		p.token++
	}
	p.sent[p.nsent%len(p.sent)] = sentPing{token: p.token, at: now}
	p.nsent++
	p.next = now.Add(p.interval)
	ping := UnconnectedPing{OpenConnectionsOnly: p.openOnly, SendTime: p.token, ClientGUID: p.guid}
	b, _ = ping.Append(b) // every ping encodes
	return b, p.next
}

// receive checks whether b, from from, is the pong to one of the recent
// pings.
func (p *pinger) receive(b []byte, from netip.AddrPort, now time.Time) (PingResult, bool) {
	if netip.AddrPortFrom(from.Addr().Unmap(), from.Port()) != p.target {
		return PingResult{}, false
	}
	var pong UnconnectedPong
	if _, err := ParseUnconnectedPong(b, &pong); err != nil {
		return PingResult{}, false
	}
	i := 0
	for i < min(p.nsent, len(p.sent)) && p.sent[i].token != pong.SendTime {
		i++
	}
	if i == min(p.nsent, len(p.sent)) {
		return PingResult{}, false
	}
	sentAt := p.sent[i].at
	return PingResult{
		GUID:     pong.ServerGUID,
		RTT:      now.Sub(sentAt),
		Data:     append([]byte(nil), pong.Data...),
		Encoding: pong.Encoding,
	}, true
}

func randomGUID() uint64 {
	var b [8]byte
	rand.Read(b[:])
	return binary.BigEndian.Uint64(b[:])
}

// resolveUDP turns "host:port" into an address, preferring IPv4 as most
// RakNet servers listen there.
func resolveUDP(ctx context.Context, address string) (netip.AddrPort, error) {
	host, portStr, err := net.SplitHostPort(address)
	if err != nil {
		return netip.AddrPort{}, err
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("invalid port %q", portStr)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return netip.AddrPortFrom(ip.Unmap(), uint16(port)), nil
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return netip.AddrPort{}, err
	}
	if len(ips) == 0 {
		return netip.AddrPort{}, fmt.Errorf("no address for %q", host)
	}
	best := ips[0]
	for _, ip := range ips {
		if ip.Unmap().Is4() {
			best = ip
			break
		}
	}
	return netip.AddrPortFrom(best.Unmap(), uint16(port)), nil
}
