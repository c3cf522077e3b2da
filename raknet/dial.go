package raknet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"time"

	"github.com/netrak/netrak/internal/driver"
	"github.com/netrak/netrak/reliability"
	"github.com/netrak/netrak/transport"
)

// DialConfig configures a client connection. The zero value is ready to
// use and suits Minecraft Bedrock servers.
type DialConfig struct {
	// Conn, if set, is the endpoint to dial from (for example a
	// transport/simnet endpoint in tests). The connection owns it: it reads
	// every datagram from it and closes it when the connection ends. If
	// nil, a UDP socket on an ephemeral port is opened.
	Conn transport.Conn
	// Protocol is the protocol version offered; 0 means ProtocolBedrock
	// (11). Use ProtocolOriginal (6) for servers built on the original
	// C++ library.
	Protocol uint8
	// GUID is the client's RakNet GUID; 0 means a random one.
	GUID uint64
	// MTU is the largest MTU probed; 0 means MaxMTU (1492). Smaller
	// standard sizes (1200, 576) are probed after it.
	MTU int
	// ConnectAttempts and ConnectInterval are the open-connection request
	// schedule; 0 means DefaultConnectAttempts and DefaultConnectInterval.
	ConnectAttempts int
	ConnectInterval time.Duration
	// ConnConfig configures the connection.
	ConnConfig
}

// Dial connects to the RakNet server at address; see DialContext. It
// gives up when the open-connection attempts run out or the online
// handshake times out.
func Dial(network, address string) (*Conn, error) {
	var d DialConfig
	return d.DialContext(context.Background(), network, address)
}

// DialContext connects to the RakNet server at address ("host:port") with
// the default DialConfig. network is "udp", "udp4", "udp6" or "raknet".
func DialContext(ctx context.Context, network, address string) (*Conn, error) {
	var d DialConfig
	return d.DialContext(ctx, network, address)
}

// DialContext connects to the RakNet server at address. It runs the
// open-connection handshake (MTU discovery, cookie) and the online
// handshake, and returns once the connection is established, or fails
// with ctx's error, ErrConnectionAttemptFailed, a *RefusedError, an
// *IncompatibleProtocolError or ErrHandshakeTimeout (all wrapped).
func (d *DialConfig) DialContext(ctx context.Context, network, address string) (*Conn, error) {
	switch network {
	case "udp", "udp4", "udp6", "raknet":
	default:
		return nil, &net.OpError{Op: "dial", Net: network, Err: net.UnknownNetworkError(network)}
	}
	addr, err := resolveUDP(ctx, address)
	if err != nil {
		return nil, fmt.Errorf("raknet: dial %s: %w", address, err)
	}
	c, err := d.DialAddr(ctx, addr)
	if err != nil {
		return nil, fmt.Errorf("raknet: dial %s: %w", address, err)
	}
	return c, nil
}

// DialAddr connects to the RakNet server at addr; see DialContext.
func (d *DialConfig) DialAddr(ctx context.Context, addr netip.AddrPort) (*Conn, error) {
	addr = netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port())
	protocol := d.Protocol
	if protocol == 0 {
		protocol = ProtocolBedrock
	}
	mtu := d.MTU
	if mtu == 0 {
		mtu = MaxMTU
	}
	if mtu < reliability.MinMTU || mtu > MaxMTU {
		return nil, fmt.Errorf("MTU %d outside %d..%d", mtu, reliability.MinMTU, MaxMTU)
	}
	attempts, interval := d.ConnectAttempts, d.ConnectInterval
	if attempts <= 0 {
		attempts = DefaultConnectAttempts
	}
	if interval <= 0 {
		interval = DefaultConnectInterval
	}
	guid := d.GUID
	if guid == 0 {
		guid = randomGUID()
	}
	tc := d.Conn
	if tc == nil {
		network := "udp4"
		if addr.Addr().Is6() {
			network = "udp6"
		}
		uc, err := transport.ListenUDP(network, ":0", transport.UDPConfig{Logger: d.Logger})
		if err != nil {
			return nil, err
		}
		tc = uc
	}
	h := newClientHandshake(addr, guid, protocol, mtu, attempts, interval)
	if err := driveClientHandshake(ctx, tc, h); err != nil {
		tc.Close()
		return nil, err
	}
	local := tc.LocalAddr()
	if h.reply2.ClientAddress.IsValid() && h.reply2.ClientAddress.Port() != 0 {
		local = h.reply2.ClientAddress // how the server sees us
	}
	p := d.params(h.negotiatedMTU())
	p.tc, p.ownsTC, p.remoteGUID = tc, true, h.reply1.ServerGUID
	p.online.client, p.online.guid, p.online.local, p.online.remote, p.online.protocol = true, guid, local, addr, protocol
	c, err := newConn(p, time.Now())
	if err != nil {
		tc.Close()
		return nil, err
	}
	c.ep.SetLocal(tc.LocalAddr())
	c.loop = driver.NewLoop()
	c.ep.Start(c.loop)
	go c.readLoop()
	select {
	case <-c.ep.UpChan():
		return c, nil
	case <-c.ep.Done():
		err := c.ep.Err()
		if err == nil {
			err = ErrHandshakeTimeout
		}
		return nil, err
	case <-ctx.Done():
		c.abort(ErrConnectionAttemptFailed)
		return nil, ctx.Err()
	}
}

// readLoop reads a dialed connection's socket until it is closed. Reads
// that keep failing end the connection with the transport's error.
func (c *Conn) readLoop() {
	r := driver.Reader{
		Conn: c.tc,
		Stop: c.ep.Done(),
		Handle: func(b []byte, from netip.AddrPort) {
			if from != c.o.cfg.remote || len(b) == 0 || IsOffline(b) {
				return
			}
			c.receive(b)
		},
	}
	if err := r.Run(); err != nil {
		c.log.Debug().Err(err).Msg("raknet: giving up on the socket")
		c.abort(err)
	}
}

// driveClientHandshake runs the offline handshake over tc until reply 2,
// a refusal, the end of the attempts or of ctx.
func driveClientHandshake(ctx context.Context, tc transport.Conn, h *clientHandshake) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	// The read deadline wakes the loop for its next send and is moved
	// into the past when ctx ends, so that a blocked read returns.
	waker := newReadWaker(ctx, tc)
	defer waker.release()
	buf := make([]byte, 2048)
	var out []byte
	for {
		var wake time.Time
		out, wake = h.poll(time.Now(), out[:0])
		if h.phase == phaseFailed {
			return h.err
		}
		if h.phase == phaseDone {
			return nil
		}
		if len(out) > 0 {
			// A probe larger than the path allows may fail to send (EMSGSIZE);
			// the next, smaller one is the answer to that.
			tc.WriteTo(out, h.server)
		}
		waker.wakeAt(wake)
		n, from, err := tc.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				if err := ctx.Err(); err != nil {
					return err
				}
				continue
			}
			return err
		}
		if netip.AddrPortFrom(from.Addr().Unmap(), from.Port()) != h.server {
			continue
		}
		h.receive(buf[:n], time.Now())
		if h.phase == phaseFailed {
			return h.err
		}
		if h.phase == phaseDone {
			return nil
		}
	}
}
