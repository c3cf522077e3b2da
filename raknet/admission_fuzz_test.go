package raknet

import (
	"encoding/binary"
	"net/netip"
	"testing"
	"time"

	"github.com/netrak/netrak/reliability"
)

// Record layout of FuzzAdmission's input: a control byte, a length byte,
// then that many bytes of datagram. The control byte picks the source
// (bits 0-1: four sources, two of them sharing an IP), how far the clock
// moves first (bits 2-4, in 100 ms steps), whether to echo the cookie the
// source last received (bit 6, for a request 2), and bit 7 turns the
// record into a listener event instead: the source's connection finishes
// its handshake, or, if it had, ends.
const (
	fuzzEcho  = 0x40
	fuzzEvent = 0x80
)

var fuzzSources = [4]netip.AddrPort{
	netip.MustParseAddrPort("198.51.100.7:1000"),
	netip.MustParseAddrPort("198.51.100.7:1001"),
	netip.MustParseAddrPort("203.0.113.1:1000"),
	netip.MustParseAddrPort("[2001:db8::1]:1000"),
}

func fuzzRecord(ctl byte, b []byte) []byte { return append([]byte{ctl, byte(len(b))}, b...) }

// FuzzAdmission feeds sequences of datagrams from a few sources to the
// admission core, with and without cookies, over a connection table that
// changes as the Listener's would. Nothing panics; no reply outgrows its
// datagram but pongs (bounded by MaxPongDataLen) and reply 2, which only
// a source that proved its address gets; nothing is admitted past the
// bounds or twice; and the per-source tables stay bounded.
func FuzzAdmission(f *testing.F) {
	var seed []byte
	seed = append(seed, fuzzRecord(0, mustAppend(f, &UnconnectedPing{SendTime: 1}))...)
	seed = append(seed, fuzzRecord(0, mustAppend(f, &OpenConnectionRequest1{Protocol: ProtocolBedrock, MTU: 576}))...)
	r2 := OpenConnectionRequest2{HasCookie: true, ServerAddress: hsServer, MTU: 576, ClientGUID: 1}
	seed = append(seed, fuzzRecord(fuzzEcho, mustAppend(f, &r2))...)
	seed = append(seed, fuzzRecord(fuzzEvent, nil)...)
	r2.HasCookie = false
	seed = append(seed, fuzzRecord(2, mustAppend(f, &r2))...)
	seed = append(seed, fuzzRecord(1, []byte{0x42})...)
	seed = append(seed, fuzzRecord(3<<2|1, []byte{0x84, 0, 0, 0})...)
	f.Add(seed)
	f.Add(fuzzRecord(0, mustAppend(f, &UnconnectedPing{OpenConnectionsOnly: true})))
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, cookies := range []bool{true, false} {
			fuzzAdmission(t, in, cookies)
		}
	})
}

func fuzzAdmission(t *testing.T, in []byte, cookies bool) {
	const maxConns, maxPending, maxSources, mtu = 3, 2, 3, 1400
	a, peers := newTestAdmission(t, ListenConfig{
		DisableCookies: !cookies, MTU: mtu, MaxConnections: maxConns, MaxPending: maxPending,
		MaxSources: maxSources, GarbageStrikes: 2, PongData: make([]byte, MaxPongDataLen-2),
	})
	var cookie [len(fuzzSources)]uint32
	now := hsEpoch
	for len(in) >= 2 {
		ctl, n := in[0], min(int(in[1]), len(in)-2)
		b := in[2 : 2+n]
		in = in[2+n:]
		src := int(ctl & 3)
		from := fuzzSources[src]
		now = now.Add(time.Duration(ctl>>2&7) * 100 * time.Millisecond)
		if ctl&fuzzEvent != 0 {
			if p, ok := peers.byAddr[from]; ok && !p.up {
				p.up = true
				peers.byAddr[from] = p
				peers.pending--
			} else if ok {
				delete(peers.byAddr, from)
			}
			continue
		}
		if ctl&fuzzEcho != 0 && len(b) >= 21 && b[0] == IDOpenConnectionRequest2 {
			binary.BigEndian.PutUint32(b[17:], cookie[src])
		}
		conns, pending, _ := peers.load()
		_, known := peers.peer(from)
		out, v := a.receive(nil, b, from, now)

		if v.event >= numEvents {
			t.Fatalf("event %d", v.event)
		}
		switch {
		case len(out) == 0:
		case v.event == evPing:
			if len(out) > unconnectedPongHeaderLen+MaxPongDataLen {
				t.Fatalf("pong of %d bytes", len(out))
			}
		case out[0] == IDOpenConnectionReply2:
			if v.event != evAdmit && !(v.event == evNone && known) {
				t.Fatalf("reply 2 with event %d", v.event)
			}
		case v.event == evOpenRequest, v.event == evIncompatible, v.event == evRefusedFull, v.event == evRefusedDuplicate:
			if len(out) > len(b) {
				t.Fatalf("%d-byte reply to %d bytes: %x", len(out), len(b), out)
			}
			if out[0] == IDOpenConnectionReply1 {
				var r OpenConnectionReply1
				if _, err := ParseOpenConnectionReply1(out, &r); err != nil {
					t.Fatalf("reply 1 does not parse: %v", err)
				}
				cookie[src] = r.Cookie
			}
		default:
			t.Fatalf("event %d replied %x", v.event, out)
		}
		if v.event == evAdmit {
			if known || peers.guidInUse(v.admit.guid) || conns >= maxConns || pending >= maxPending {
				t.Fatalf("admitted %+v: known %v, %d connections, %d pending", v.admit, known, conns, pending)
			}
			if v.admit.mtu < reliability.MinMTU || v.admit.mtu > mtu || !a.hs.accepts(v.admit.protocol) {
				t.Fatalf("admitted %+v", v.admit)
			}
			peers.add(from, v.admit)
		}
		if v.blocked && !a.blocks.blocked(from.Addr(), now) {
			t.Fatal("blocked, but the block list does not say so")
		}
		if len(a.limiter.buckets) > maxSources || len(a.blocks.entries) > maxSources {
			t.Fatalf("tables grew to %d and %d sources", len(a.limiter.buckets), len(a.blocks.entries))
		}
	}
}
