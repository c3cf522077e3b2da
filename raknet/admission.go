package raknet

import (
	"errors"
	"net/netip"
	"sync/atomic"
	"time"
)

// admission is the listener's sans-I/O core for the datagrams that belong
// to no connection: the offline messages a server answers (unconnected
// pings, open connection requests 1 and 2) and whatever else strangers
// send. It applies the admission rules in the order that keeps a flood
// cheap: a malformed datagram, a blocked source, a stray connected
// datagram and a source over its rate are dropped before anything is
// parsed; then cookies, the bounds on open and pending connections, and
// duplicate addresses and GUIDs decide about a request 2.
//
// It takes the time as an argument, owns no goroutine or socket, and only
// the listener's reader goroutine calls it, so it needs no lock of its
// own. What it must know about existing connections it asks through
// peerTable, whose answers come from the map the listener shares with its
// connections.
type admission struct {
	hs                   *serverHandshake
	limiter              *rateLimiter
	blocks               *blockList
	peers                peerTable
	maxConns, maxPending int
	pongEncoding         PongEncoding
	// pong is read by the reader goroutine and replaced by SetPongData
	// from any goroutine.
	pong atomic.Pointer[PongResponse]
}

// peerTable is admission's view of the connections that exist.
type peerTable interface {
	// peer describes the connection from addr, if there is one.
	peer(addr netip.AddrPort) (peerInfo, bool)
	// guidInUse reports whether a connection has this client GUID.
	guidInUse(guid uint64) bool
	// load is the number of connections, pending ones included, and of
	// pending ones; closed reports that no connection may start any more.
	load() (conns, pending int, closed bool)
}

// peerInfo is what admission needs to know about an existing connection.
type peerInfo struct {
	guid uint64
	mtu  uint16
	up   bool // the online handshake finished
}

// event is what admission did with a datagram; the listener counts them.
type event uint8

const (
	evNone event = iota // nothing to count: a silent 0x02 ping, a resent reply 2
	evPing
	evOpenRequest
	evAdmit
	evRefusedFull
	evRefusedDuplicate
	evIncompatible
	evRateLimited
	evBlocked
	evStray
	evMalformed
	evUnknownID
	evBadCookie
	evSmallProbe
	evUnsupported
	numEvents
)

// verdict is admission's decision about one datagram; the reply, if any,
// is appended to the caller's buffer.
type verdict struct {
	event event
	// blocked reports that this datagram put its source on the block
	// list.
	blocked bool
	// admit is the connection to start when event is evAdmit. Its reply 2
	// is in the reply; the caller sends it only once the connection
	// exists, so a connection it fails to create is never announced.
	admit admitted
}

// admitted describes a connection a request 2 may start.
type admitted struct {
	guid     uint64 // the client's
	mtu      uint16
	protocol uint8 // offered in request 1
}

// newAdmission builds the core from a configuration whose defaults are
// filled in.
func newAdmission(cfg *ListenConfig, peers peerTable) (*admission, error) {
	a := &admission{
		hs:           newServerHandshake(cfg.GUID, cfg.Protocols, cfg.MTU, !cfg.DisableCookies, cfg.CookieRotation),
		limiter:      newRateLimiter(cfg.OfflineRate, cfg.OfflineBurst, cfg.MaxSources),
		blocks:       newBlockList(cfg.GarbageStrikes, cfg.BlockDuration, cfg.MaxSources),
		peers:        peers,
		maxConns:     cfg.MaxConnections,
		maxPending:   cfg.MaxPending,
		pongEncoding: cfg.PongEncoding,
	}
	if err := a.setPongData(cfg.PongData); err != nil {
		return nil, err
	}
	return a, nil
}

// setPongData changes what unconnected pongs carry. It may be called from
// any goroutine.
func (a *admission) setPongData(data []byte) error {
	r := &PongResponse{ServerGUID: a.hs.guid, Data: append([]byte(nil), data...), Encoding: a.pongEncoding}
	if (&UnconnectedPong{Data: r.Data, Encoding: r.Encoding}).Len()-unconnectedPongHeaderLen > MaxPongDataLen {
		return ErrPongDataTooLong
	}
	a.pong.Store(r)
	return nil
}

// receive decides what to do with datagram b from from at now, a datagram
// that no connection took, and appends the reply to dst.
func (a *admission) receive(dst, b []byte, from netip.AddrPort, now time.Time) ([]byte, verdict) {
	if len(b) == 0 {
		return dst, verdict{event: evMalformed}
	}
	if a.blocks.blocked(from.Addr(), now) {
		return dst, verdict{event: evBlocked}
	}
	if !IsOffline(b) {
		return dst, verdict{event: evStray}
	}
	if !a.limiter.allow(from, now) {
		return dst, verdict{event: evRateLimited}
	}
	dst, v := a.offline(dst, b, from, now)
	if v.event == evMalformed || v.event == evUnknownID {
		v.blocked = a.blocks.strike(from.Addr(), now)
	}
	return dst, v
}

// offline answers an offline message.
func (a *admission) offline(dst, b []byte, from netip.AddrPort, now time.Time) ([]byte, verdict) {
	switch b[0] {
	case IDUnconnectedPing, IDUnconnectedPingOpenConnections:
		if b[0] == IDUnconnectedPingOpenConnections && !a.accepting() {
			// "Open connections only": a full server stays silent.
			return dst, verdict{}
		}
		out, err := AnswerPing(dst, b, a.pong.Load())
		switch {
		case err == nil:
			return out, verdict{event: evPing}
		case errors.Is(err, ErrNotAccepting):
			return dst, verdict{}
		}
		return dst, verdict{event: evMalformed}
	case IDOpenConnectionRequest1:
		out, reason := a.hs.handleRequest1(dst, b, from, now)
		if reason == dropNone {
			return out, verdict{event: evOpenRequest}
		}
		return out, verdict{event: dropEvent(reason)}
	case IDOpenConnectionRequest2:
		req, protocol, reason := a.hs.parseRequest2(b, from, now)
		if reason != dropNone {
			return dst, verdict{event: dropEvent(reason)}
		}
		return a.request2(dst, &req, protocol, from)
	}
	return dst, verdict{event: evUnknownID}
}

// request2 admits the connection a valid request 2 asks for, or refuses.
func (a *admission) request2(dst []byte, req *OpenConnectionRequest2, protocol uint8, from netip.AddrPort) ([]byte, verdict) {
	if p, ok := a.peers.peer(from); ok {
		if p.guid == req.ClientGUID && !p.up {
			// Our reply 2 was lost and the client asks again.
			return a.hs.reply2(dst, from, p.mtu), verdict{}
		}
		return a.hs.refusal(dst, IDAlreadyConnected), verdict{event: evRefusedDuplicate}
	}
	conns, pending, closed := a.peers.load()
	switch {
	case closed:
		return dst, verdict{}
	case a.peers.guidInUse(req.ClientGUID):
		return a.hs.refusal(dst, IDAlreadyConnected), verdict{event: evRefusedDuplicate}
	case conns >= a.maxConns || pending >= a.maxPending:
		return a.hs.refusal(dst, IDNoFreeIncomingConnections), verdict{event: evRefusedFull}
	}
	return a.hs.reply2(dst, from, req.MTU), verdict{
		event: evAdmit,
		admit: admitted{guid: req.ClientGUID, mtu: req.MTU, protocol: protocol},
	}
}

// accepting reports whether a request 2 could start a connection now.
func (a *admission) accepting() bool {
	conns, pending, closed := a.peers.load()
	return !closed && conns < a.maxConns && pending < a.maxPending
}

func dropEvent(r dropReason) event {
	switch r {
	case dropMalformed:
		return evMalformed
	case dropUnknownID:
		return evUnknownID
	case dropBadProtocol:
		return evIncompatible
	case dropSmallProbe:
		return evSmallProbe
	case dropBadCookie:
		return evBadCookie
	case dropUnsupported:
		return evUnsupported
	}
	return evNone
}
