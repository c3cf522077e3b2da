package transporttest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/netrak/netrak/transport"
)

// MakePair returns two fresh, connected endpoints: each can send to the
// other's LocalAddr, without loss or reordering. The suite closes them.
type MakePair func(t *testing.T) (a, b transport.Conn)

// wait bounds every blocking step, so a broken Conn fails rather than hangs.
const wait = 10 * time.Second

// Run runs the conformance suite as subtests of t, in real time.
func Run(t *testing.T, makePair MakePair) {
	tests := []struct {
		name string
		f    func(t *testing.T, a, b transport.Conn)
	}{
		{"RoundTrip", testRoundTrip},
		{"Boundaries", testBoundaries},
		{"Truncation", testTruncation},
		{"WriteDoesNotRetain", testWriteDoesNotRetain},
		{"CloseUnblocksRead", testCloseUnblocksRead},
		{"UseAfterClose", testUseAfterClose},
		{"DeadlineTimeout", testDeadlineTimeout},
		{"PastDeadlineUnblocksRead", testPastDeadlineUnblocksRead},
		{"ZeroDeadlineClears", testZeroDeadlineClears},
		{"ConcurrentWriters", testConcurrentWriters},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := makePair(t)
			defer a.Close()
			defer b.Close()
			tt.f(t, a, b)
		})
	}
}

func readBounded(t *testing.T, c transport.Conn, p []byte) int {
	t.Helper()
	if err := c.SetReadDeadline(time.Now().Add(wait)); err != nil {
		t.Fatalf("SetReadDeadline: %v", err)
	}
	defer c.SetReadDeadline(time.Time{})
	n, _, err := c.ReadFrom(p)
	if err != nil {
		t.Fatalf("ReadFrom: %v", err)
	}
	return n
}

func testRoundTrip(t *testing.T, a, b transport.Conn) {
	if err := a.WriteTo([]byte("ping"), b.LocalAddr()); err != nil {
		t.Fatalf("WriteTo: %v", err)
	}
	buf := make([]byte, 64)
	b.SetReadDeadline(time.Now().Add(wait))
	n, from, err := b.ReadFrom(buf)
	if err != nil || string(buf[:n]) != "ping" {
		t.Fatalf("ReadFrom = %q, %v", buf[:n], err)
	}
	if from != a.LocalAddr() {
		t.Fatalf("source %v, want the sender's LocalAddr %v", from, a.LocalAddr())
	}
	if err := b.WriteTo([]byte("pong"), from); err != nil {
		t.Fatalf("reply: %v", err)
	}
	if n := readBounded(t, a, buf); string(buf[:n]) != "pong" {
		t.Fatalf("reply = %q", buf[:n])
	}
}

func testBoundaries(t *testing.T, a, b transport.Conn) {
	sizes := []int{1, 0, 100, 1200, 7}
	for i, size := range sizes {
		if err := a.WriteTo(bytes.Repeat([]byte{byte(i + 1)}, size), b.LocalAddr()); err != nil {
			t.Fatalf("WriteTo %d bytes: %v", size, err)
		}
	}
	buf := make([]byte, 2000)
	for i, size := range sizes {
		n := readBounded(t, b, buf)
		if !bytes.Equal(buf[:n], bytes.Repeat([]byte{byte(i + 1)}, size)) {
			t.Fatalf("datagram %d: got %d bytes, want %d bytes of %d", i, n, size, i+1)
		}
	}
}

func testTruncation(t *testing.T, a, b transport.Conn) {
	a.WriteTo([]byte("0123456789"), b.LocalAddr())
	a.WriteTo([]byte("next"), b.LocalAddr())
	small := make([]byte, 4)
	b.SetReadDeadline(time.Now().Add(wait))
	n, _, err := b.ReadFrom(small)
	if err != nil || n != 4 || string(small) != "0123" {
		t.Fatalf("short read = %d %q %v, want 4 \"0123\" <nil>", n, small[:n], err)
	}
	buf := make([]byte, 64)
	if n := readBounded(t, b, buf); string(buf[:n]) != "next" {
		t.Fatalf("after truncation got %q, want the next datagram", buf[:n])
	}
}

func testWriteDoesNotRetain(t *testing.T, a, b transport.Conn) {
	p := []byte("original")
	a.WriteTo(p, b.LocalAddr())
	copy(p, "XXXXXXXX")
	buf := make([]byte, 64)
	if n := readBounded(t, b, buf); string(buf[:n]) != "original" {
		t.Fatalf("got %q: WriteTo kept a reference to its argument", buf[:n])
	}
}

func testCloseUnblocksRead(t *testing.T, a, b transport.Conn) {
	errc := make(chan error, 1)
	go func() {
		_, _, err := b.ReadFrom(make([]byte, 64))
		errc <- err
	}()
	if err := b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("blocked ReadFrom after Close: %v, want net.ErrClosed", err)
		}
	case <-time.After(wait):
		t.Fatal("Close did not unblock ReadFrom")
	}
}

func testUseAfterClose(t *testing.T, a, b transport.Conn) {
	if err := a.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := a.Close(); err != nil {
		t.Fatalf("second Close: %v, want nil", err)
	}
	if _, _, err := a.ReadFrom(make([]byte, 8)); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("ReadFrom after Close: %v, want net.ErrClosed", err)
	}
	if err := a.WriteTo([]byte("x"), b.LocalAddr()); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("WriteTo after Close: %v, want net.ErrClosed", err)
	}
}

func checkTimeout(t *testing.T, err error) {
	t.Helper()
	var ne net.Error
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("err = %v, want a net.Error timeout wrapping os.ErrDeadlineExceeded", err)
	}
}

func testDeadlineTimeout(t *testing.T, a, b transport.Conn) {
	start := time.Now()
	b.SetReadDeadline(start.Add(20 * time.Millisecond))
	_, _, err := b.ReadFrom(make([]byte, 8))
	checkTimeout(t, err)
	if d := time.Since(start); d < 20*time.Millisecond {
		t.Fatalf("timed out after %v, before the 20ms deadline", d)
	}
}

func testPastDeadlineUnblocksRead(t *testing.T, a, b transport.Conn) {
	errc := make(chan error, 1)
	go func() {
		_, _, err := b.ReadFrom(make([]byte, 8))
		errc <- err
	}()
	b.SetReadDeadline(time.Unix(1, 0))
	select {
	case err := <-errc:
		checkTimeout(t, err)
	case <-time.After(wait):
		t.Fatal("a deadline in the past did not unblock ReadFrom")
	}
}

func testZeroDeadlineClears(t *testing.T, a, b transport.Conn) {
	b.SetReadDeadline(time.Unix(1, 0))
	_, _, err := b.ReadFrom(make([]byte, 8))
	checkTimeout(t, err)
	b.SetReadDeadline(time.Time{})
	a.WriteTo([]byte("after"), b.LocalAddr())
	buf := make([]byte, 8)
	n, _, err := b.ReadFrom(buf) // would fail at once if the deadline stuck
	if err != nil || string(buf[:n]) != "after" {
		t.Fatalf("ReadFrom after clearing the deadline = %q, %v", buf[:n], err)
	}
}

func testConcurrentWriters(t *testing.T, a, b transport.Conn) {
	const writers, each = 4, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if err := a.WriteTo(fmt.Appendf(nil, "%d/%d", w, i), b.LocalAddr()); err != nil {
					t.Errorf("WriteTo: %v", err)
					return
				}
			}
		})
	}
	seen := make(map[string]bool)
	buf := make([]byte, 64)
	for range writers * each {
		n := readBounded(t, b, buf)
		if seen[string(buf[:n])] {
			t.Fatalf("datagram %q delivered twice", buf[:n])
		}
		seen[string(buf[:n])] = true
	}
	wg.Wait()
}
