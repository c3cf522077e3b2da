package reliability

import (
	"bytes"
	"testing"
	"time"

	"github.com/netrak/netrak/internal/rakcapture"
)

// TestEngineCaptureReplay feeds each direction of the original library's
// session into an Engine and checks what comes out: the online handshake
// messages, then the 16 user messages in order, then the disconnect.
func TestEngineCaptureReplay(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// Engine [0] receives what the client sent, [1] what the server sent.
	var engines [2]*Engine
	for i := range engines {
		e, err := New(Config{MTU: 1492})
		if err != nil {
			t.Fatal(err)
		}
		engines[i] = e
	}
	var got [2][]Message
	for _, d := range connected(rakcapture.Load(t)) {
		side := 0
		if d.From == "server" {
			side = 1
		}
		now := start.Add(time.Duration(d.T * float64(time.Second)))
		engines[side].Receive(d.Data, now)
		for {
			m, ok := engines[side].ReadMessage()
			if !ok {
				break
			}
			m.Payload = bytes.Clone(m.Payload)
			got[side] = append(got[side], m)
		}
	}
	for side, name := range []string{"client->server", "server->client"} {
		var user []Message
		var ids []byte
		for _, m := range got[side] {
			ids = append(ids, m.Payload[0])
			if m.Payload[0] == 0x86 {
				user = append(user, m)
			}
		}
		t.Logf("%s: message ids %x", name, ids)
		if len(user) != rakcapture.UserMessages {
			t.Fatalf("%s: %d user messages, want 16", name, len(user))
		}
		for i, m := range user {
			if want := rakcapture.UserMessage(i); !bytes.Equal(m.Payload, want) {
				t.Errorf("%s: user message %d differs (%d bytes, want %d)", name, i, len(m.Payload), len(want))
			}
			if m.Reliability != ReliableOrdered || m.Channel != 0 {
				t.Errorf("%s: user message %d is %v on channel %d", name, i, m.Reliability, m.Channel)
			}
		}
		// The handshake comes first, user messages after it.
		wantFirst := byte(0x09) // connection request
		if side == 1 {
			wantFirst = 0x10 // connection request accepted
		}
		if ids[0] != wantFirst {
			t.Errorf("%s: first message %#x, want %#x", name, ids[0], wantFirst)
		}
		if side == 0 {
			if !bytes.Contains(ids, []byte{0x13}) {
				t.Errorf("%s: no new incoming connection (0x13)", name)
			}
			if ids[len(ids)-1] != 0x15 {
				t.Errorf("%s: last message %#x, want the disconnection notification 0x15", name, ids[len(ids)-1])
			}
		}
		s := engines[side].Stats()
		if s.Drops != (Drops{}) {
			t.Errorf("%s: drops %+v", name, s.Drops)
		}
	}
}
