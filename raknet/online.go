package raknet

import (
	"net/netip"
	"time"

	"github.com/netrak/netrak/internal/endpoint"
	"github.com/netrak/netrak/reliability"
)

// Defaults for connections.
const (
	// DefaultHandshakeTimeout bounds the online handshake: connection
	// request to new incoming connection.
	DefaultHandshakeTimeout = 10 * time.Second
	// DefaultConnectedPingInterval is how often a connection sends a
	// connected ping, which keeps an idle connection alive and measures
	// the RTT.
	DefaultConnectedPingInterval = 5 * time.Second
	// DefaultCloseTimeout bounds a graceful Close: the time allowed for
	// the peer to acknowledge the data still queued and the disconnection
	// notification.
	DefaultCloseTimeout = 3 * time.Second
	// DefaultReceiveBuffer bounds the bytes of user messages a connection
	// holds for its reader, on top of what the reliability engine holds
	// (reliability.Config.MaxReceiveBytes). Past both, the engine stops
	// acknowledging and the sender slows down.
	DefaultReceiveBuffer = 4 << 20
	// minPeerCloseLinger and maxPeerCloseLinger bound how long a
	// connection whose peer sent a disconnection notification lingers
	// after the peer's latest datagram; see online.Linger. The
	// floor leaves room for the engine's repeat of the ACK (40 ms after
	// the first); the ceiling is how long a peer of this package waits
	// for the ACK by default (DefaultCloseTimeout) before it gives up.
	minPeerCloseLinger = 100 * time.Millisecond
	maxPeerCloseLinger = DefaultCloseTimeout
)

// Message is a user message received on a connection. Data starts with
// the message's identifier byte. The caller owns Data: from ReadMessage it
// is a fresh buffer, from ReadMessageInto the buffer passed in (or a
// larger one if that was too small).
type Message = endpoint.Message

// onlineConfig is everything a connection's online phase needs to start.
type onlineConfig struct {
	client        bool
	guid          uint64
	local, remote netip.AddrPort
	protocol      uint8
	engine        reliability.Config // MTU included

	handshakeTimeout time.Duration
	deadTimeout      time.Duration
	pingInterval     time.Duration
	receiveBuffer    int
}

// online is RakNet's part of a connection after the offline handshake,
// plugged into an endpoint.Core: the online handshake, connected pings
// and pongs, the lost-connection keep-alive and the disconnection
// notification. The Core does the rest.
type online struct {
	cfg  onlineConfig
	core *endpoint.Core

	gotRequest        bool // server: connection request answered
	handshakeDeadline time.Time
	nextPing          time.Time
	// lossMark holds lossSigns at the two latest connected pings: loss
	// since lossMark[0] is recent.
	lossMark [2]uint64
	scratch  []byte
}

func newOnline(cfg onlineConfig, now time.Time) (*online, error) {
	core, err := endpoint.NewCore(endpoint.Config{
		Engine:        cfg.engine,
		DeadTimeout:   cfg.deadTimeout,
		ReceiveBuffer: cfg.receiveBuffer,
		Goodbye:       []byte{IDDisconnectionNotification},
		ErrLost:       ErrConnectionLost,
		ErrPeerClosed: ErrPeerClosed,
	}, now)
	if err != nil {
		return nil, err
	}
	o := &online{cfg: cfg, core: core, handshakeDeadline: now.Add(cfg.handshakeTimeout)}
	core.SetProtocol(o)
	if cfg.client {
		req := ConnectionRequest{ClientGUID: cfg.guid, Time: now.UnixMilli()}
		b, _ := req.Append(o.scratch[:0]) // every request encodes
		o.send(b, reliability.Reliable, now)
	}
	return o, nil
}

// send queues a protocol message; the engine copies it.
func (o *online) send(b []byte, r reliability.Reliability, now time.Time) {
	o.scratch = b[:0]
	o.core.SendInternal(b, r, now)
}

// internalAddresses are the addresses sent in the handshake: ours first,
// then unassigned ones up to the count the protocol expects.
func (o *online) internalAddresses() []netip.AddrPort {
	list := make([]netip.AddrPort, InternalAddressCount(o.cfg.protocol))
	if o.cfg.local.Addr().Is4() && !o.cfg.local.Addr().IsUnspecified() {
		list[0] = o.cfg.local
	}
	return list
}

// Linger is how long a connection whose peer closed stays after the
// peer's latest datagram to acknowledge resends. Our ACKs go out at once
// and the engine repeats each one, so the peer normally goes quiet and
// nothing arrives; a peer that missed both copies resends its
// disconnection notification (or data not yet acknowledged) after its
// retransmission timeout, doubled each time the resend is lost too.
//
// On a path that showed no loss lately, three of our RTOs (the peer's is
// alike on the same path) cover a lost ACK and a lost resend, as QUIC's
// draining period of three PTOs does. Where there was loss, the peer may
// have backed off to its longest timeout: then the linger is two RTO
// ceilings. docs/benchmarks.md has the measurements behind the choice.
func (o *online) Linger() time.Duration {
	st := o.core.Engine().Stats()
	if lossSigns(&st) != o.lossMark[0] {
		return min(2*o.rtoCeiling(), maxPeerCloseLinger)
	}
	return min(max(3*st.RTO, minPeerCloseLinger), maxPeerCloseLinger)
}

// lossSigns sums the counters that grow when datagrams are lost either
// way: gaps we reported, our datagrams declared lost, and resends of what
// we had received (our ACK was lost or late).
func lossSigns(st *reliability.Stats) uint64 {
	return st.NAKsSent + st.DatagramsLost + st.Drops.DuplicateMessage + st.Drops.DuplicateDatagram
}

// rtoCeiling is the longest retransmission timeout of our engine.
func (o *online) rtoCeiling() time.Duration { return o.cfg.engine.RTOCeiling() }

// Intercept handles RakNet's own messages. Connected ping, pong, the
// lost-connection keep-alive and the disconnection notification are
// recognised by identifier and exact length in every state, as the
// original library does; handshake messages only during the handshake.
// Anything else is a user message.
func (o *online) Intercept(m reliability.Message, now time.Time) bool {
	p := m.Payload
	switch {
	case len(p) == connectedPingLen && p[0] == IDConnectedPing:
		var ping ConnectedPing
		ParseConnectedPing(p, &ping) // the length and identifier are checked
		pong := ConnectedPong{PingTime: ping.Time, PongTime: now.UnixMilli()}
		b, _ := pong.Append(o.scratch[:0]) // every pong encodes
		o.send(b, reliability.Unreliable, now)
		return true
	case len(p) == connectedPongLen && p[0] == IDConnectedPong:
		var pong ConnectedPong
		ParseConnectedPong(p, &pong) // the length and identifier are checked
		o.sampleRTT(pong.PingTime, now)
		return true
	case len(p) == 1 && p[0] == IDDetectLostConnections:
		// The peer's keep-alive has done its job by being acknowledged;
		// the original library drops it the same way.
		return true
	case len(p) == 1 && p[0] == IDDisconnectionNotification:
		// Its datagram may have come long ago, if the reader's queue was
		// full: the linger starts now.
		o.core.PeerClosing(now)
		return true
	case !o.core.Up():
		// The server answered the request; the client may send data before
		// its new incoming connection arrives (it can be lost and resent).
		return o.handleHandshake(p, now) || !(o.gotRequest && !o.cfg.client)
	}
	return false
}

// handleHandshake handles the online handshake messages and reports
// whether p was one.
func (o *online) handleHandshake(p []byte, now time.Time) bool {
	if len(p) == 0 {
		return false
	}
	switch {
	case !o.cfg.client && p[0] == IDConnectionRequest:
		var req ConnectionRequest
		if _, err := ParseConnectionRequest(p, &req); err != nil {
			return true
		}
		acc := ConnectionRequestAccepted{
			ClientAddress:     o.cfg.remote,
			InternalAddresses: o.internalAddresses(),
			RequestTime:       req.Time,
			ReplyTime:         now.UnixMilli(),
		}
		b, _ := acc.Append(o.scratch[:0]) // internalAddresses fits
		o.send(b, reliability.Reliable, now)
		o.gotRequest = true
		return true
	case !o.cfg.client && p[0] == IDNewIncomingConnection && o.gotRequest:
		var nic NewIncomingConnection
		if _, err := ParseNewIncomingConnection(p, &nic); err != nil {
			return true
		}
		o.sampleRTT(nic.PingTime, now)
		o.up(now)
		return true
	case o.cfg.client && p[0] == IDConnectionRequestAccepted:
		var acc ConnectionRequestAccepted
		if _, err := ParseConnectionRequestAccepted(p, &acc); err != nil {
			return true
		}
		o.sampleRTT(acc.RequestTime, now)
		nic := NewIncomingConnection{
			ServerAddress:     o.cfg.remote,
			InternalAddresses: o.internalAddresses(),
			PingTime:          acc.ReplyTime,
			PongTime:          now.UnixMilli(),
		}
		b, _ := nic.Append(o.scratch[:0]) // internalAddresses fits
		o.send(b, reliability.Reliable, now)
		o.up(now)
		o.ping(now)
		return true
	}
	return false
}

// sampleRTT records the round trip since sent, a millisecond timestamp we
// sent that the peer echoed, unless the peer's echo cannot be ours: a
// peer's clock or a forged value must not become the RTT.
func (o *online) sampleRTT(sent int64, now time.Time) {
	if rtt := now.Sub(time.UnixMilli(sent)); rtt >= 0 && rtt < time.Minute {
		o.core.SetPingRTT(rtt)
	}
}

func (o *online) up(now time.Time) {
	o.core.MarkUp()
	o.nextPing = now.Add(o.cfg.pingInterval)
}

func (o *online) ping(now time.Time) {
	p := ConnectedPing{Time: now.UnixMilli()}
	b, _ := p.Append(o.scratch[:0]) // every ping encodes
	o.send(b, reliability.Unreliable, now)
	o.nextPing = now.Add(o.cfg.pingInterval)
	st := o.core.Engine().Stats()
	o.lossMark = [2]uint64{o.lossMark[1], lossSigns(&st)}
}

// pinging reports whether connected pings are due: connected, and
// neither side closing.
func (o *online) pinging() bool {
	return o.core.Up() && !o.core.Closing() && !o.core.PeerClosed()
}

// Poll ends a handshake that took too long and sends connected pings.
func (o *online) Poll(now time.Time) {
	if !o.core.Up() && !now.Before(o.handshakeDeadline) {
		o.core.End(ErrHandshakeTimeout)
		return
	}
	if o.pinging() && !now.Before(o.nextPing) {
		o.ping(now)
	}
}

// NextWake is the handshake deadline or the next ping.
func (o *online) NextWake() time.Time {
	switch {
	case !o.core.Up():
		return o.handshakeDeadline
	case o.pinging():
		return o.nextPing
	}
	return time.Time{}
}

// receive and poll drive the Core directly, for tests and fuzzing of the
// sans-I/O connection.
func (o *online) receive(b []byte, now time.Time) { o.core.Receive(b, now) }

func (o *online) poll(now time.Time, out []byte, emit func([]byte)) []byte {
	return o.core.Poll(now, out, emit)
}
