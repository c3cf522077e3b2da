package raknet

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/netrak/netrak/transport"
)

var (
	pingTarget = netip.MustParseAddrPort("10.0.0.2:19132")
	t0         = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
)

func TestPingerSchedule(t *testing.T) {
	p := &pinger{target: pingTarget, guid: 77, interval: time.Second}
	b, wake := p.poll(t0, nil)
	var ping UnconnectedPing
	if _, err := ParseUnconnectedPing(b, &ping); err != nil {
		t.Fatal(err)
	}
	if ping.ClientGUID != 77 || ping.OpenConnectionsOnly || !wake.Equal(t0.Add(time.Second)) {
		t.Fatalf("first ping %+v, wake %v", ping, wake)
	}
	// Nothing to send before the interval has passed.
	if b, wake := p.poll(t0.Add(999*time.Millisecond), nil); len(b) != 0 || !wake.Equal(t0.Add(time.Second)) {
		t.Fatalf("early poll sent %x, wake %v", b, wake)
	}
	b2, _ := p.poll(t0.Add(time.Second), nil)
	var ping2 UnconnectedPing
	if _, err := ParseUnconnectedPing(b2, &ping2); err != nil {
		t.Fatal(err)
	}
	if ping2.SendTime == ping.SendTime {
		t.Fatal("resent ping reuses the send time")
	}

	// A pong to the first ping that arrives after the resend still
	// measures from the first ping.
	pong := UnconnectedPong{SendTime: ping.SendTime, ServerGUID: 5, Data: []byte("x"), Encoding: PongRaw}
	pb := mustAppend(t, &pong)
	res, ok := p.receive(pb, pingTarget, t0.Add(1500*time.Millisecond))
	if !ok || res.RTT != 1500*time.Millisecond || res.GUID != 5 || string(res.Data) != "x" || res.Encoding != PongRaw {
		t.Fatalf("receive = %+v, %v", res, ok)
	}
	// The result must not alias the datagram buffer.
	pb[len(pb)-1] = 'y'
	if string(res.Data) != "x" {
		t.Fatal("result data aliases the read buffer")
	}
}

func TestPingerIgnores(t *testing.T) {
	p := &pinger{target: pingTarget, guid: 1, interval: time.Second}
	b, _ := p.poll(t0, nil)
	var ping UnconnectedPing
	ParseUnconnectedPing(b, &ping)
	goodBytes := mustAppend(t, &UnconnectedPong{SendTime: ping.SendTime, ServerGUID: 9})
	staleBytes := mustAppend(t, &UnconnectedPong{SendTime: ping.SendTime + 12345, ServerGUID: 9})

	tests := []struct {
		name string
		b    []byte
		from netip.AddrPort
	}{
		{"other source", goodBytes, netip.MustParseAddrPort("10.0.0.3:19132")},
		{"other port", goodBytes, netip.MustParseAddrPort("10.0.0.2:19133")},
		{"unknown send time", staleBytes, pingTarget},
		{"not a pong", b, pingTarget},
		{"garbage", []byte{0x1c, 1, 2}, pingTarget},
		{"empty", nil, pingTarget},
	}
	for _, tt := range tests {
		if _, ok := p.receive(tt.b, tt.from, t0); ok {
			t.Errorf("%s: accepted", tt.name)
		}
	}
	// The same pong from an IPv4-mapped source is the target.
	mapped := netip.AddrPortFrom(netip.AddrFrom16(pingTarget.Addr().As16()), pingTarget.Port())
	if _, ok := p.receive(goodBytes, mapped, t0); !ok {
		t.Error("pong from the IPv4-mapped form of the target rejected")
	}
}

// serveResponder answers pings arriving on conn until conn is closed.
func serveResponder(conn transport.Conn, r *PongResponse) {
	buf := make([]byte, 2048)
	var out []byte
	for {
		n, from, err := conn.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		out, err = AnswerPing(out[:0], buf[:n], r)
		if err == nil {
			conn.WriteTo(out, from)
		}
	}
}

func TestPingLoopbackUDP(t *testing.T) {
	server, err := transport.ListenUDP("udp4", "127.0.0.1:0", transport.UDPConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		serveResponder(server, &PongResponse{ServerGUID: 0xabc, Data: []byte("RakNet C++ reference echo server"), Encoding: PongRaw})
	}()
	defer wg.Wait()
	defer server.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	addr := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), server.LocalAddr().Port())
	res, err := Ping(ctx, addr.String())
	if err != nil {
		t.Fatal(err)
	}
	if res.GUID != 0xabc || string(res.Data) != "RakNet C++ reference echo server" || res.Encoding != PongRaw || res.RTT <= 0 {
		t.Fatalf("result %+v", res)
	}
}

func TestPingContextEnds(t *testing.T) {
	// Nobody answers: Ping returns once ctx is cancelled, with ctx's error.
	silent, err := transport.ListenUDP("udp4", "127.0.0.1:0", transport.UDPConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	conn, err := transport.ListenUDP("udp4", "127.0.0.1:0", transport.UDPConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		c := PingConfig{Conn: conn}
		_, err := c.Ping(ctx, netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), silent.LocalAddr().Port()))
		errc <- err
	}()
	// The ping is sent before Ping blocks; wait for it rather than sleep.
	buf := make([]byte, 64)
	n, _, err := silent.ReadFrom(buf)
	if err != nil || !bytes.Equal(buf[9:25], offlineMagic[:]) || n != unconnectedPingLen {
		t.Fatalf("silent server read %x, %v", buf[:n], err)
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	// Ping cleared the deadline it used: the conn still reads normally.
	silent.WriteTo([]byte{1}, conn.LocalAddr())
	if _, _, err := conn.ReadFrom(buf); err != nil {
		t.Fatalf("read after Ping: %v", err)
	}
}
