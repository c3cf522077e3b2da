package raknet

import (
	"bytes"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/netrak/netrak/internal/rakcapture"
	"github.com/netrak/netrak/reliability"
)

// Replays of the original C++ library's session (package rakcapture) into our
// handshake cores and sessions: each side of ours takes the other side's
// captured datagrams and must end up where the C++ peer did.

func captureConn(t *testing.T, client bool) *online {
	t.Helper()
	s, err := newOnline(onlineConfig{
		client: client, guid: 1, local: hsClient, remote: hsServer, protocol: ProtocolOriginal,
		engine:           engineConfig(reliability.Config{}, MaxMTU, zerolog.Logger{}),
		handshakeTimeout: DefaultHandshakeTimeout, deadTimeout: time.Minute,
		pingInterval: DefaultConnectedPingInterval, receiveBuffer: DefaultReceiveBuffer,
	}, hsEpoch)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCaptureReplayHandshakeCores(t *testing.T) {
	h := newClientHandshake(hsServer, 1, ProtocolOriginal, MaxMTU, 12, DefaultConnectInterval)
	h.poll(hsEpoch, nil)
	s := newServerHandshake(2, []uint8{ProtocolOriginal}, MaxMTU, false, time.Minute)
	var accepted bool
	for _, d := range rakcapture.Load(t) {
		b := d.Data
		if !IsOffline(b) {
			continue
		}
		switch d.From {
		case "server":
			h.receive(b, hsEpoch)
		case "client":
			switch b[0] {
			case IDOpenConnectionRequest1:
				out, reason := s.handleRequest1(nil, b, hsClient, hsEpoch)
				if reason != dropNone || len(out) == 0 {
					t.Fatalf("C++ request 1 dropped: %v", reason)
				}
			case IDOpenConnectionRequest2:
				r, protocol, reason := s.parseRequest2(b, hsClient, hsEpoch)
				if reason != dropNone || protocol != ProtocolOriginal || r.MTU != MaxMTU {
					t.Fatalf("C++ request 2: %+v protocol %d, %v", r, protocol, reason)
				}
				accepted = true
			}
		}
		if h.phase == phaseRequest2 && h.sent == 0 {
			h.poll(hsEpoch, nil) // what our client would send next
		}
	}
	if !accepted {
		t.Fatal("no request 2 in the capture")
	}
	if h.phase != phaseDone || h.negotiatedMTU() != MaxMTU || h.reply1.HasCookie {
		t.Fatalf("client core after the C++ server's replies: phase %v, MTU %d, cookie %v", h.phase, h.negotiatedMTU(), h.reply1.HasCookie)
	}
}

func TestCaptureReplaySessions(t *testing.T) {
	client := captureConn(t, true)  // takes the C++ server's datagrams
	server := captureConn(t, false) // takes the C++ client's datagrams
	for _, d := range rakcapture.Load(t) {
		if IsOffline(d.Data) {
			continue
		}
		now := hsEpoch.Add(time.Duration(d.T * float64(time.Second)))
		s := client
		if d.From == "client" {
			s = server
		}
		s.receive(d.Data, now)
		s.poll(now, nil, func([]byte) {})
	}
	if !client.core.Up() || !server.core.Up() {
		t.Fatalf("states after the handshake: client up %v, server up %v", client.core.Up(), server.core.Up())
	}
	for name, s := range map[string]*online{"client": client, "server": server} {
		for i := range rakcapture.UserMessages {
			if !s.core.HasMessage() {
				t.Fatalf("%s: only %d user messages", name, i)
			}
			m := s.core.ReadMessage()
			if !bytes.Equal(m.Data, rakcapture.UserMessage(i)) || m.Reliability != reliability.ReliableOrdered || m.Channel != 0 {
				t.Fatalf("%s: message %d: %d bytes %v ch %d", name, i, len(m.Data), m.Reliability, m.Channel)
			}
		}
		if s.core.HasMessage() {
			t.Errorf("%s: more than 16 user messages", name)
		}
	}
	if !server.core.PeerClosed() {
		t.Error("the C++ client's disconnection notification was not recognised")
	}
	if client.core.PeerClosed() {
		t.Error("client side saw a disconnection the server never sent")
	}
}
