package raknet

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/netrak/netrak/reliability"
)

func fuzzOnlines(t testing.TB) (client, server *online) {
	mk := func(isClient bool) *online {
		s, err := newOnline(onlineConfig{
			client: isClient, guid: 1, local: hsClient, remote: hsServer, protocol: 11,
			engine:           engineConfig(reliability.Config{MTU: 1400, MaxReceiveBytes: 1 << 16}, 1400, zerolog.Logger{}),
			handshakeTimeout: DefaultHandshakeTimeout, deadTimeout: 10 * time.Second,
			pingInterval: DefaultConnectedPingInterval, receiveBuffer: 1 << 16,
		}, hsEpoch)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	return mk(true), mk(false)
}

// FuzzOnlineReceive feeds arbitrary datagrams (u16-length-prefixed in
// the input) to a client and a server session: nothing panics, and the
// reader's queue stays within its bound.
func FuzzOnlineReceive(f *testing.F) {
	// Seeds: the real handshake datagrams of a client and a server.
	c, s := fuzzOnlines(f)
	var seed []byte
	now := hsEpoch
	for range 4 {
		now = now.Add(20 * time.Millisecond)
		c.poll(now, nil, func(b []byte) {
			seed = binary.BigEndian.AppendUint16(seed, uint16(len(b)))
			seed = append(seed, b...)
			s.receive(b, now)
		})
		s.poll(now, nil, func(b []byte) {
			seed = binary.BigEndian.AppendUint16(seed, uint16(len(b)))
			seed = append(seed, b...)
			c.receive(b, now)
		})
	}
	f.Add(seed)
	f.Add([]byte{0, 4, 0x84, 0, 0, 0})
	f.Fuzz(func(t *testing.T, in []byte) {
		c, s := fuzzOnlines(t)
		now := hsEpoch
		for len(in) >= 2 {
			n := int(binary.BigEndian.Uint16(in))
			in = in[2:]
			n = min(n, len(in))
			d := in[:n]
			in = in[n:]
			now = now.Add(5 * time.Millisecond)
			for _, x := range []*online{c, s} {
				x.receive(d, now)
				x.poll(now, nil, func([]byte) {})
				if x.core.Queued() > 1<<16+reliability.DefaultMaxMessageSize {
					t.Fatalf("queue grew to %d", x.core.Queued())
				}
				for x.core.HasMessage() {
					x.core.ReadMessage()
				}
			}
		}
	})
}
