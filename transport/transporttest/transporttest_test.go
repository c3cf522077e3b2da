package transporttest_test

import (
	"net/netip"
	"testing"

	"github.com/netrak/netrak/transport"
	"github.com/netrak/netrak/transport/simnet"
	"github.com/netrak/netrak/transport/transporttest"
)

func TestUDP(t *testing.T) {
	transporttest.Run(t, func(t *testing.T) (transport.Conn, transport.Conn) {
		a, err := transport.ListenUDP("udp4", "127.0.0.1:0", transport.UDPConfig{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := transport.ListenUDP("udp4", "127.0.0.1:0", transport.UDPConfig{})
		if err != nil {
			t.Fatal(err)
		}
		return a, b
	})
}

func TestSimnet(t *testing.T) {
	transporttest.Run(t, func(t *testing.T) (transport.Conn, transport.Conn) {
		n := simnet.New(1)
		a, err := n.Listen(netip.MustParseAddrPort("10.0.0.1:1"))
		if err != nil {
			t.Fatal(err)
		}
		b, err := n.Listen(netip.MustParseAddrPort("10.0.0.2:2"))
		if err != nil {
			t.Fatal(err)
		}
		return a, b
	})
}

func TestProbeLossDirect(t *testing.T) {
	var conns [2]*transport.UDPConn
	for i := range conns {
		c, err := transport.ListenUDP("udp4", "127.0.0.1:0", transport.UDPConfig{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		conns[i] = c
	}
	// Loopback loses nothing when no buffer overflows.
	p := transporttest.ProbeLoss(t, conns[0], conns[1], conns[1].LocalAddr(), 1000)
	if p.Sent != 1000 || p.Received != 1000 || p.LossRate() != 0 || p.MarkersReceived < 16 {
		t.Fatalf("probe %+v, want all 1000 datagrams and at least 16 markers", p)
	}
}
