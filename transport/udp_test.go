package transport

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"runtime"
	"testing"
	"time"
)

func listenUDP(t testing.TB, network, address string, cfg UDPConfig) *UDPConn {
	t.Helper()
	c, err := ListenUDP(network, address, cfg)
	if err != nil {
		t.Fatalf("ListenUDP(%q, %q): %v", network, address, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// skipWithoutIPv6 skips the test, saying why, when ::1 cannot be bound.
func skipWithoutIPv6(t *testing.T) {
	t.Helper()
	c, err := net.ListenUDP("udp6", &net.UDPAddr{IP: net.IPv6loopback})
	if err != nil {
		t.Skipf("skipping: this machine has no IPv6 loopback (::1): %v", err)
	}
	c.Close()
}

// readWithin reads one datagram, failing the test if none comes in time.
func readWithin(t *testing.T, c Conn, buf []byte) (int, netip.AddrPort) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	defer c.SetReadDeadline(time.Time{})
	n, from, err := c.ReadFrom(buf)
	if err != nil {
		t.Fatalf("ReadFrom: %v", err)
	}
	return n, from
}

func testRoundTrip(t *testing.T, network, address string) {
	a := listenUDP(t, network, address, UDPConfig{})
	b := listenUDP(t, network, address, UDPConfig{})
	if !a.LocalAddr().Addr().IsLoopback() || a.LocalAddr().Port() == 0 {
		t.Fatalf("LocalAddr = %v", a.LocalAddr())
	}
	for _, size := range []int{0, 1, 1200, 8000} {
		msg := bytes.Repeat([]byte{byte(size)}, size)
		if err := a.WriteTo(msg, b.LocalAddr()); err != nil {
			t.Fatalf("WriteTo: %v", err)
		}
		buf := make([]byte, 9000)
		n, from := readWithin(t, b, buf)
		if from != a.LocalAddr() {
			t.Errorf("from = %v, want %v", from, a.LocalAddr())
		}
		if !bytes.Equal(buf[:n], msg) {
			t.Errorf("got %d bytes, want %d", n, size)
		}
	}
}

func TestUDPIPv4(t *testing.T) { testRoundTrip(t, "udp4", "127.0.0.1:0") }

func TestUDPIPv6(t *testing.T) {
	skipWithoutIPv6(t)
	testRoundTrip(t, "udp6", "[::1]:0")
}

func TestUDPDualStack(t *testing.T) {
	skipWithoutIPv6(t)
	dual := listenUDP(t, "udp", "[::]:0", UDPConfig{})
	if dual.ipv4Only {
		t.Fatal("[::] socket is IPv4-only")
	}
	v4 := listenUDP(t, "udp4", "127.0.0.1:0", UDPConfig{})
	v6 := listenUDP(t, "udp6", "[::1]:0", UDPConfig{})
	port := dual.LocalAddr().Port()
	buf := make([]byte, 64)

	// IPv4 arrives from a plain IPv4 address, not ::ffff:127.0.0.1.
	v4.WriteTo([]byte("four"), netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), port))
	n, from := readWithin(t, dual, buf)
	if string(buf[:n]) != "four" || from != v4.LocalAddr() || !from.Addr().Is4() {
		t.Fatalf("got %q from %v, want \"four\" from %v", buf[:n], from, v4.LocalAddr())
	}
	// Replies to the plain IPv4 address work from the dual-stack socket.
	if err := dual.WriteTo([]byte("back"), from); err != nil {
		t.Fatalf("WriteTo IPv4 from dual-stack: %v", err)
	}
	n, _ = readWithin(t, v4, buf)
	if string(buf[:n]) != "back" {
		t.Fatalf("got %q", buf[:n])
	}
	v6.WriteTo([]byte("six"), netip.AddrPortFrom(netip.IPv6Loopback(), port))
	n, from = readWithin(t, dual, buf)
	if string(buf[:n]) != "six" || from != v6.LocalAddr() {
		t.Fatalf("got %q from %v", buf[:n], from)
	}
}

// TestUDPWildcardLocalAddr: LocalAddr reports the wildcard that was asked
// for, though "udp" binds 0.0.0.0 as a dual-stack [::] socket.
func TestUDPWildcardLocalAddr(t *testing.T) {
	for _, tc := range []struct {
		network, address, want string
		needIPv6               bool
	}{
		{"udp", "0.0.0.0:0", "0.0.0.0", false},
		{"udp4", "0.0.0.0:0", "0.0.0.0", false},
		{"udp4", ":0", "0.0.0.0", false},
		{"udp", ":0", "::", true},
		{"udp", "[::]:0", "::", true},
		{"udp6", "[::]:0", "::", true},
	} {
		t.Run(tc.network+" "+tc.address, func(t *testing.T) {
			if tc.needIPv6 {
				skipWithoutIPv6(t)
			}
			c := listenUDP(t, tc.network, tc.address, UDPConfig{})
			got := c.LocalAddr()
			if got.Addr() != netip.MustParseAddr(tc.want) || got.Port() == 0 {
				t.Fatalf("LocalAddr = %v, want %s with the bound port", got, tc.want)
			}
			if got.Addr().Is4() {
				// The socket still receives IPv4 on the reported port.
				other := listenUDP(t, "udp4", "127.0.0.1:0", UDPConfig{})
				other.WriteTo([]byte("four"), netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), got.Port()))
				buf := make([]byte, 8)
				n, from := readWithin(t, c, buf)
				if string(buf[:n]) != "four" || from != other.LocalAddr() {
					t.Fatalf("got %q from %v", buf[:n], from)
				}
			}
		})
	}
}

func TestUDPIPv4OnlyAcceptsMappedDestination(t *testing.T) {
	a := listenUDP(t, "udp4", "127.0.0.1:0", UDPConfig{})
	b := listenUDP(t, "udp4", "127.0.0.1:0", UDPConfig{})
	mapped := netip.AddrPortFrom(netip.AddrFrom16(b.LocalAddr().Addr().As16()), b.LocalAddr().Port())
	if err := a.WriteTo([]byte("x"), mapped); err != nil {
		t.Fatalf("WriteTo(%v): %v", mapped, err)
	}
	readWithin(t, b, make([]byte, 8))
}

func TestUDPBuffers(t *testing.T) {
	c := listenUDP(t, "udp4", "127.0.0.1:0", UDPConfig{})
	r, w := c.Buffers()
	t.Logf("asked for %d each way; granted read %d, write %d", DefaultSocketBuffer, r, w)
	if runtime.GOOS == "linux" && (r <= 0 || w <= 0) {
		t.Fatalf("Buffers() = %d, %d; want positive on Linux", r, w)
	}
	small := listenUDP(t, "udp4", "127.0.0.1:0", UDPConfig{ReadBuffer: 64 << 10, WriteBuffer: 32 << 10})
	sr, sw := small.Buffers()
	if runtime.GOOS == "linux" && (sr != 2*(64<<10) || sw != 2*(32<<10)) {
		// Linux doubles the request for its own overhead.
		t.Fatalf("Buffers() = %d, %d; want %d, %d", sr, sw, 2*(64<<10), 2*(32<<10))
	}
}

func TestUDPDSCP(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("DSCP read-back is checked on Linux only")
	}
	v4 := listenUDP(t, "udp4", "127.0.0.1:0", UDPConfig{DSCP: 46})
	rc, _ := v4.conn.SyscallConn()
	if tos, err := socketTOS(rc, familyIPv4); err != nil || tos != 46<<2 {
		t.Fatalf("IP_TOS = %#x, %v; want %#x", tos, err, 46<<2)
	}
	// The marking does not get in the way of traffic.
	other := listenUDP(t, "udp4", "127.0.0.1:0", UDPConfig{})
	v4.WriteTo([]byte("ef"), other.LocalAddr())
	readWithin(t, other, make([]byte, 8))

	if _, err := net.ListenUDP("udp6", &net.UDPAddr{IP: net.IPv6loopback}); err == nil {
		v6 := listenUDP(t, "udp6", "[::1]:0", UDPConfig{DSCP: 46})
		rc, _ := v6.conn.SyscallConn()
		if tc, err := socketTOS(rc, familyIPv6); err != nil || tc != 46<<2 {
			t.Fatalf("IPV6_TCLASS = %#x, %v; want %#x", tc, err, 46<<2)
		}
	}
}

func TestUDPConfigErrors(t *testing.T) {
	if _, err := ListenUDP("udp4", "127.0.0.1:0", UDPConfig{DSCP: 64}); !errors.Is(err, ErrBadDSCP) {
		t.Errorf("DSCP 64: %v, want ErrBadDSCP", err)
	}
	if _, err := ListenUDP("tcp", "127.0.0.1:0", UDPConfig{}); err == nil {
		t.Error("network tcp accepted")
	}
	a := listenUDP(t, "udp4", "127.0.0.1:0", UDPConfig{})
	if _, err := ListenUDP("udp4", a.LocalAddr().String(), UDPConfig{}); err == nil {
		t.Error("second socket on the same port accepted")
	}
}

func TestUDPClose(t *testing.T) {
	c := listenUDP(t, "udp4", "127.0.0.1:0", UDPConfig{})
	errc := make(chan error)
	go func() {
		_, _, err := c.ReadFrom(make([]byte, 10))
		errc <- err
	}()
	// Close must unblock the read whether or not it has started blocking.
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := <-errc; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read after Close: %v, want net.ErrClosed", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := c.WriteTo([]byte("x"), c.LocalAddr()); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("WriteTo after Close: %v, want net.ErrClosed", err)
	}
}

func TestUDPDeadline(t *testing.T) {
	c := listenUDP(t, "udp4", "127.0.0.1:0", UDPConfig{})
	c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, _, err := c.ReadFrom(make([]byte, 10))
	var ne net.Error
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("err = %v, want a timeout wrapping os.ErrDeadlineExceeded", err)
	}

	// A deadline moved into the past stops a read already blocked.
	c.SetReadDeadline(time.Time{})
	errc := make(chan error)
	go func() {
		_, _, err := c.ReadFrom(make([]byte, 10))
		errc <- err
	}()
	c.SetReadDeadline(time.Unix(1, 0))
	if err := <-errc; !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("err = %v, want os.ErrDeadlineExceeded", err)
	}
}

func TestUDPTruncates(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows reports truncation as an error")
	}
	a := listenUDP(t, "udp4", "127.0.0.1:0", UDPConfig{})
	b := listenUDP(t, "udp4", "127.0.0.1:0", UDPConfig{})
	a.WriteTo([]byte("0123456789"), b.LocalAddr())
	a.WriteTo([]byte("next"), b.LocalAddr())
	buf := make([]byte, 4)
	if n, _ := readWithin(t, b, buf); n != 4 || string(buf) != "0123" {
		t.Fatalf("got %d %q, want 4 \"0123\"", n, buf[:n])
	}
	// The rest of the long datagram is gone; the next one is intact.
	if n, _ := readWithin(t, b, buf); string(buf[:n]) != "next" {
		t.Fatalf("got %q, want \"next\"", buf[:n])
	}
}

func TestUDPReadContext(t *testing.T) {
	c := listenUDP(t, "udp4", "127.0.0.1:0", UDPConfig{})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, _, err := ReadContext(ctx, c, make([]byte, 10)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
	// The socket is still usable, without a stale deadline.
	c.WriteTo([]byte("ok"), c.LocalAddr())
	buf := make([]byte, 10)
	n, _, err := ReadContext(t.Context(), c, buf)
	if err != nil || string(buf[:n]) != "ok" {
		t.Fatalf("ReadContext = %q, %v", buf[:n], err)
	}
}

func TestUDPNoAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation count is checked in the full run")
	}
	a := listenUDP(t, "udp4", "127.0.0.1:0", UDPConfig{})
	b := listenUDP(t, "udp4", "127.0.0.1:0", UDPConfig{})
	msg, buf := make([]byte, 1200), make([]byte, 1500)
	to := b.LocalAddr()
	allocs := testing.AllocsPerRun(200, func() {
		if err := a.WriteTo(msg, to); err != nil {
			t.Fatal(err)
		}
		if _, _, err := b.ReadFrom(buf); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("write+read allocates %v times per datagram, want 0", allocs)
	}
}
