package raknet

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	goraknet "github.com/sandertv/go-raknet"

	"github.com/netrak/netrak/transport"
)

// Interop with go-raknet v1.15.0 over real loopback UDP.

const interopMOTD = "MCPE;netrak interop;594;1.20.80;0;10;13253860892328930865;netrak;Survival;1;19132;19133;"

func TestInteropPingGoRaknetListener(t *testing.T) {
	l, err := goraknet.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.PongData([]byte(interopMOTD))

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := Ping(ctx, l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if res.GUID != uint64(l.ID()) {
		t.Errorf("GUID = %#x, want %#x", res.GUID, uint64(l.ID()))
	}
	if string(res.Data) != interopMOTD || res.Encoding != PongPrefixed {
		t.Errorf("data %q (%v), want %q (prefixed)", res.Data, res.Encoding, interopMOTD)
	}
	m, err := ParseBedrockMOTD(res.Data)
	if err != nil || m.MOTD != "netrak interop" || m.PortV6 != 19133 {
		t.Errorf("MOTD %+v, %v", m, err)
	}
}

func TestInteropGoRaknetPingsResponder(t *testing.T) {
	for _, tt := range []struct {
		enc      PongEncoding
		readable bool // go-raknet reads only length-prefixed pongs
	}{{PongPrefixed, true}, {PongRaw, false}} {
		t.Run(tt.enc.String(), func(t *testing.T) {
			server, err := transport.ListenUDP("udp4", "127.0.0.1:0", transport.UDPConfig{})
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				serveResponder(server, &PongResponse{ServerGUID: 42, Data: []byte(interopMOTD), Encoding: tt.enc})
			}()
			defer wg.Wait()
			defer server.Close()

			addr := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), server.LocalAddr().Port())
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			data, err := goraknet.PingContext(ctx, addr.String())
			if !tt.readable {
				var opErr *net.OpError
				if err == nil || !errors.As(err, &opErr) {
					t.Fatalf("go-raknet read a raw pong: %q, %v", data, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(data) != interopMOTD {
				t.Fatalf("go-raknet read %q, want %q", data, interopMOTD)
			}
		})
	}
}
