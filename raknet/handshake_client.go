package raknet

import (
	"net/netip"
	"time"

	"github.com/netrak/netrak/reliability"
)

// The client's open-connection schedule, as in the original library's
// Connect defaults: 12 attempts 500 ms apart, split evenly over the probe
// sizes, so each of 1492, 1200 and 576 is tried 4 times before the next
// smaller one, and the attempt fails about 6 s after it started.
const (
	DefaultConnectAttempts = 12
	DefaultConnectInterval = 500 * time.Millisecond
)

// probeMTUs are the MTUs the client tries in turn.
var probeMTUs = [...]uint16{MaxMTU, 1200, 576}

type clientPhase uint8

const (
	phaseRequest1 clientPhase = iota // probing with open connection request 1
	phaseRequest2                    // reply 1 received, sending request 2
	phaseDone                        // reply 2 received
	phaseFailed
)

// clientHandshake is the sans-I/O client side of the open-connection
// (offline) handshake: MTU discovery with request 1, then request 2 with
// the cookie echoed. It decides what to send and when; the caller writes,
// reads and passes the time in.
type clientHandshake struct {
	server   netip.AddrPort
	guid     uint64
	protocol uint8
	sizes    []uint16 // probe sizes, largest first
	attempts int      // request 1 attempts over all sizes
	interval time.Duration

	phase clientPhase
	sent  int // request 1 sent so far; request 2 sent in phase 2
	next  time.Time
	err   error

	reply1 OpenConnectionReply1
	mtu    uint16 // probe size reply 1 answered
	reply2 OpenConnectionReply2
}

// newClientHandshake prepares a handshake offering protocol, probing MTUs
// no larger than maxMTU.
func newClientHandshake(server netip.AddrPort, guid uint64, protocol uint8, maxMTU int, attempts int, interval time.Duration) *clientHandshake {
	h := &clientHandshake{server: server, guid: guid, protocol: protocol, attempts: attempts, interval: interval}
	for _, s := range probeMTUs {
		if int(s) <= maxMTU {
			h.sizes = append(h.sizes, s)
		}
	}
	if len(h.sizes) == 0 || int(h.sizes[0]) != maxMTU {
		// A configured MTU below a standard size is probed first itself.
		h.sizes = append([]uint16{uint16(maxMTU)}, h.sizes...)
	}
	if h.attempts < len(h.sizes) {
		h.attempts = len(h.sizes)
	}
	return h
}

// probeSize is the MTU request 1 number n (from 0) probes.
func (h *clientHandshake) probeSize(n int) uint16 {
	per := h.attempts / len(h.sizes)
	i := n / per
	if i >= len(h.sizes) {
		i = len(h.sizes) - 1
	}
	return h.sizes[i]
}

// poll appends the message due at now to b, if any, and returns when it
// wants to be called again. Once the attempts run out, the handshake
// fails with ErrConnectionAttemptFailed.
func (h *clientHandshake) poll(now time.Time, b []byte) ([]byte, time.Time) {
	if h.phase >= phaseDone {
		return b, time.Time{}
	}
	if !h.next.IsZero() && now.Before(h.next) {
		return b, h.next
	}
	switch h.phase {
	case phaseRequest1:
		if h.sent >= h.attempts {
			h.fail(ErrConnectionAttemptFailed)
			return b, time.Time{}
		}
		r := OpenConnectionRequest1{Protocol: h.protocol, MTU: h.probeSize(h.sent)}
		b, _ = r.Append(b) // sizes are all >= MinProbeMTU
	case phaseRequest2:
		if h.sent >= h.attempts/len(h.sizes) {
			h.fail(ErrConnectionAttemptFailed)
			return b, time.Time{}
		}
		r := OpenConnectionRequest2{
			HasCookie:     h.reply1.HasCookie,
			Cookie:        h.reply1.Cookie,
			ServerAddress: h.server,
			MTU:           h.mtu,
			ClientGUID:    h.guid,
		}
		b, _ = r.Append(b) // every request 2 encodes
	}
	h.sent++
	h.next = now.Add(h.interval)
	return b, h.next
}

func (h *clientHandshake) fail(err error) {
	h.phase = phaseFailed
	h.err = err
}

// receive handles a datagram from the server. It reports whether the
// datagram advanced the handshake (so that the caller polls at once);
// refusals end it with a typed error in h.err.
func (h *clientHandshake) receive(b []byte, now time.Time) bool {
	if h.phase >= phaseDone || len(b) == 0 {
		return false
	}
	switch id := b[0]; {
	case id == IDOpenConnectionReply1 && h.phase == phaseRequest1:
		var r OpenConnectionReply1
		if _, err := ParseOpenConnectionReply1(b, &r); err != nil {
			if err == ErrSecurityUnsupported {
				h.fail(ErrProtocolViolation)
				return true
			}
			return false
		}
		mtu := int(r.MTU)
		// The reply answers one of our probes; never trust it beyond the
		// largest we sent or below what the engine can run with.
		mtu = min(mtu, int(h.probeSize(max(h.sent-1, 0))))
		if mtu < reliability.MinMTU {
			mtu = reliability.MinMTU
		}
		h.reply1, h.mtu = r, uint16(mtu)
		h.phase, h.sent, h.next = phaseRequest2, 0, time.Time{}
		return true
	case id == IDOpenConnectionReply2 && h.phase == phaseRequest2:
		var r OpenConnectionReply2
		if _, err := ParseOpenConnectionReply2(b, &r); err != nil {
			return false
		}
		if r.Encryption {
			h.fail(ErrProtocolViolation)
			return true
		}
		h.reply2 = r
		h.phase = phaseDone
		return true
	case id == IDIncompatibleProtocolVersion:
		var m IncompatibleProtocolVersion
		if _, err := ParseIncompatibleProtocolVersion(b, &m); err != nil {
			return false
		}
		h.fail(&IncompatibleProtocolError{Offered: h.protocol, Server: m.Protocol, ServerGUID: m.ServerGUID})
		return true
	case IsRefusalID(id):
		var r Refusal
		if _, err := ParseRefusal(b, &r); err != nil && len(b) != 1 {
			return false
		}
		// Some servers send the bare identifier.
		h.fail(&RefusedError{ID: id, ServerGUID: r.GUID})
		return true
	}
	return false
}

// negotiatedMTU is the MTU the connection runs with, once reply 2 came:
// the smaller of what reply 1 and reply 2 said, within the engine's range.
func (h *clientHandshake) negotiatedMTU() int {
	mtu := int(h.mtu)
	if m := int(h.reply2.MTU); m >= reliability.MinMTU && m < mtu {
		mtu = m
	}
	return min(max(mtu, reliability.MinMTU), reliability.MaxMTU)
}
