package raknet

import (
	"testing"
	"time"
)

// FuzzServerOffline feeds arbitrary offline messages to the server's
// handshake core: it never panics, and never answers with more bytes than
// it was sent (no amplification; pongs, answered by AnswerPing, are
// bounded separately by MaxPongDataLen).
func FuzzServerOffline(f *testing.F) {
	f.Add(mustAppend(f, &OpenConnectionRequest1{Protocol: 11, MTU: 1492}))
	f.Add(mustAppend(f, &OpenConnectionRequest1{Protocol: 6, MTU: 576}))
	f.Add(mustAppend(f, &OpenConnectionRequest2{HasCookie: true, Cookie: 7, ServerAddress: hsServer, MTU: 1400, ClientGUID: 1}))
	f.Add(mustAppend(f, &OpenConnectionRequest2{ServerAddress: hsServer, MTU: 1400, ClientGUID: 1}))
	f.Add([]byte{IDOpenConnectionRequest1})
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, cookies := range []bool{true, false} {
			s := newServerHandshake(1, []uint8{6, 10, 11}, 1400, cookies, time.Minute)
			out, _ := s.handleRequest1(nil, b, hsClient, hsEpoch)
			if len(out) > len(b) {
				t.Fatalf("reply of %d bytes to %d", len(out), len(b))
			}
			if r, protocol, reason := s.parseRequest2(b, hsClient, hsEpoch); reason == dropNone {
				if r.MTU < 400 || r.MTU > 1400 || protocol == 0 {
					t.Fatalf("accepted request 2 %+v protocol %d", r, protocol)
				}
			}
		}
		h := newClientHandshake(hsServer, 1, 11, MaxMTU, 12, time.Second)
		h.poll(hsEpoch, nil)
		h.receive(b, hsEpoch)
		if h.phase == phaseRequest2 && (h.mtu < 400 || h.mtu > MaxMTU) {
			t.Fatalf("client took MTU %d", h.mtu)
		}
	})
}
