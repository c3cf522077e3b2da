package simnet

import (
	"encoding/binary"
	"errors"
	"math"
	"net"
	"net/netip"
	"os"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/netrak/netrak/transport"
)

var (
	addrA = netip.MustParseAddrPort("10.0.0.1:1000")
	addrB = netip.MustParseAddrPort("10.0.0.2:2000")
)

func listen(t *testing.T, n *Network, a netip.AddrPort) *Conn {
	t.Helper()
	c, err := n.Listen(a)
	if err != nil {
		t.Fatalf("Listen(%v): %v", a, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// drain reads everything queued at c right now, without waiting, and calls
// f for each datagram.
func drain(t *testing.T, c *Conn, f func(p []byte, from netip.AddrPort)) {
	t.Helper()
	c.SetReadDeadline(time.Now())
	defer c.SetReadDeadline(time.Time{})
	buf := make([]byte, MaxDatagram)
	for {
		n, from, err := c.ReadFrom(buf)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return
		}
		if err != nil {
			t.Fatalf("ReadFrom: %v", err)
		}
		f(buf[:n], from)
	}
}

func seqPayload(b []byte, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(b[:0], seq)
}

// within fails unless got is within tol of want.
func within(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.5f, want %.5f ± %.5f", what, got, want, tol)
	} else {
		t.Logf("%s = %.5f (want %.5f ± %.5f)", what, got, want, tol)
	}
}

func TestLossAndDuplicationRates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const total = 100_000
		n := New(1)
		a, b := listen(t, n, addrA), listen(t, n, addrB)
		n.SetLink(addrA, addrB, transport.Impairment{Loss: 0.1, Duplicate: 0.05})
		var payload []byte
		received := 0
		for i := range total {
			payload = seqPayload(payload, uint64(i))
			if err := a.WriteTo(payload, addrB); err != nil {
				t.Fatal(err)
			}
			if i%500 == 499 {
				drain(t, b, func([]byte, netip.AddrPort) { received++ })
			}
		}
		drain(t, b, func([]byte, netip.AddrPort) { received++ })

		s := n.Stats()
		if s.Sent != total {
			t.Fatalf("Sent = %d, want %d", s.Sent, total)
		}
		if uint64(received) != s.Delivered {
			t.Errorf("received %d, Delivered counter %d", received, s.Delivered)
		}
		// Five standard deviations of a binomial proportion.
		tol := func(p, n float64) float64 { return 5 * math.Sqrt(p*(1-p)/n) }
		within(t, "loss rate", float64(s.DroppedLoss)/total, 0.1, tol(0.1, total))
		passed := float64(total - s.DroppedLoss)
		within(t, "duplication rate", float64(s.Duplicated)/passed, 0.05, tol(0.05, passed))
		if want := uint64(passed) + s.Duplicated; s.Delivered != want {
			t.Errorf("Delivered = %d, want passed+duplicated = %d", s.Delivered, want)
		}
	})
}

func TestReorderRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const total = 100_000
		n := New(2)
		a, b := listen(t, n, addrA), listen(t, n, addrB)
		n.SetLink(addrA, addrB, transport.Impairment{Latency: 10 * time.Millisecond, Reorder: 0.1})
		var payload []byte
		var highest uint64
		late, received := 0, 0
		count := func(p []byte, _ netip.AddrPort) {
			seq := binary.BigEndian.Uint64(p)
			received++
			if seq < highest {
				late++ // something sent after it arrived first
			}
			highest = max(highest, seq)
		}
		for i := range total {
			payload = seqPayload(payload, uint64(i+1))
			a.WriteTo(payload, addrB)
			time.Sleep(time.Millisecond)
			if i%100 == 99 {
				drain(t, b, count)
			}
		}
		time.Sleep(time.Second)
		drain(t, b, count)

		s := n.Stats()
		if received != total {
			t.Fatalf("received %d of %d; reordering must not lose datagrams", received, total)
		}
		tol := 5 * math.Sqrt(0.1*0.9/total)
		within(t, "reorder counter rate", float64(s.Reordered)/total, 0.1, tol)
		within(t, "observed late arrivals", float64(late)/total, 0.1, tol)
	})
}

type traceEntry struct {
	At       time.Duration
	From, To string
	Len      int
	Seq      uint64
}

// runScenario drives four concurrent flows through an impaired network and
// returns what each receiver saw, and when.
func runScenario(t *testing.T, seed uint64) ([][]traceEntry, transport.ImpairmentStats) {
	var traces [][]traceEntry
	var stats transport.ImpairmentStats
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		n := New(seed)
		n.SetDefault(transport.Impairment{
			Latency: 20 * time.Millisecond, Jitter: 8 * time.Millisecond,
			Loss: 0.05, Duplicate: 0.03, Reorder: 0.05,
			Bandwidth: 200_000, MTU: 1200,
		})
		const flows = 4
		traces = make([][]traceEntry, flows)
		var readers, writers sync.WaitGroup
		receivers := make([]*Conn, flows)
		for f := range flows {
			src := listen(t, n, netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 1, byte(f)}), 5000))
			dst := listen(t, n, netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 2, byte(f)}), 6000))
			receivers[f] = dst
			readers.Go(func() {
				buf := make([]byte, 2048)
				for {
					m, from, err := dst.ReadFrom(buf)
					if err != nil {
						return
					}
					traces[f] = append(traces[f], traceEntry{time.Since(start), from.String(), dst.LocalAddr().String(), m, binary.BigEndian.Uint64(buf)})
				}
			})
			writers.Go(func() {
				buf := make([]byte, 1300)
				for i := range 800 {
					size := 8 + (i*37+f*101)%1290 // some exceed the MTU
					binary.BigEndian.PutUint64(buf, uint64(i))
					src.WriteTo(buf[:size], dst.LocalAddr())
					time.Sleep(time.Duration(1+(i+f)%3) * time.Millisecond)
				}
			})
		}
		writers.Wait()
		time.Sleep(5 * time.Second)
		for _, r := range receivers {
			r.Close()
		}
		readers.Wait()
		stats = n.Stats()
	})
	return traces, stats
}

func TestSameSeedSameTrace(t *testing.T) {
	first, s1 := runScenario(t, 42)
	second, s2 := runScenario(t, 42)
	if diff := cmp.Diff(first, second); diff != "" {
		t.Fatalf("same seed, different traces (-first +second):\n%s", diff)
	}
	if s1 != s2 {
		t.Fatalf("same seed, different stats:\n%v\n%v", s1, s2)
	}
	t.Logf("stats: %v", s1)
	if s1.DroppedLoss == 0 || s1.DroppedMTU == 0 || s1.Duplicated == 0 || s1.Reordered == 0 {
		t.Fatalf("scenario does not exercise every impairment: %v", s1)
	}
	other, _ := runScenario(t, 43)
	if cmp.Equal(first, other) {
		t.Fatal("different seeds gave identical traces")
	}
}

func TestLatencyAndJitter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const latency, jitter = 50 * time.Millisecond, 10 * time.Millisecond
		n := New(3)
		a, b := listen(t, n, addrA), listen(t, n, addrB)
		n.SetLink(addrA, addrB, transport.Impairment{Latency: latency, Jitter: jitter})
		start := time.Now()
		const total = 2000
		done := make(chan []time.Duration)
		go func() {
			var delays []time.Duration
			buf := make([]byte, 64)
			for range total {
				m, _, err := b.ReadFrom(buf)
				if err != nil {
					t.Error(err)
					break
				}
				sent := time.Duration(binary.BigEndian.Uint64(buf[:m]))
				delays = append(delays, time.Since(start)-sent)
			}
			done <- delays
		}()
		var payload []byte
		for range total {
			payload = binary.BigEndian.AppendUint64(payload[:0], uint64(time.Since(start)))
			a.WriteTo(payload, addrB)
			time.Sleep(3 * time.Millisecond)
		}
		delays := <-done
		lo, hi, sum := time.Hour, time.Duration(0), time.Duration(0)
		for _, d := range delays {
			lo, hi, sum = min(lo, d), max(hi, d), sum+d
		}
		if lo < latency-jitter || hi > latency+jitter {
			t.Errorf("delays span [%v, %v], want within [%v, %v]", lo, hi, latency-jitter, latency+jitter)
		}
		if lo > latency-jitter*9/10 || hi < latency+jitter*9/10 {
			t.Errorf("delays span [%v, %v], want jitter to use most of ±%v", lo, hi, jitter)
		}
		mean := sum / time.Duration(len(delays))
		if mean < latency-time.Millisecond || mean > latency+time.Millisecond {
			t.Errorf("mean delay %v, want %v ± 1ms", mean, latency)
		}
		if s := n.Stats(); s.Delayed != total {
			t.Errorf("Delayed = %d, want %d", s.Delayed, total)
		}
	})
}

func TestMTU(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := New(4)
		a, b := listen(t, n, addrA), listen(t, n, addrB)
		n.SetLink(addrA, addrB, transport.Impairment{MTU: 1200})
		a.WriteTo(make([]byte, 1201), addrB)
		a.WriteTo(make([]byte, 1200), addrB)
		var sizes []int
		drain(t, b, func(p []byte, _ netip.AddrPort) { sizes = append(sizes, len(p)) })
		if !cmp.Equal(sizes, []int{1200}) {
			t.Fatalf("received sizes %v, want [1200]", sizes)
		}
		if s := n.Stats(); s.DroppedMTU != 1 {
			t.Fatalf("DroppedMTU = %d, want 1", s.DroppedMTU)
		}
		// The reverse direction has no MTU.
		b.WriteTo(make([]byte, 5000), addrA)
		got := 0
		drain(t, a, func(p []byte, _ netip.AddrPort) { got = len(p) })
		if got != 5000 {
			t.Fatalf("reverse direction delivered %d bytes, want 5000", got)
		}
	})
}

func TestBandwidthCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const rate = 10_000 // bytes per second: 1000-byte datagram every 100ms
		n := New(5)
		a, b := listen(t, n, addrA), listen(t, n, addrB)
		n.SetLink(addrA, addrB, transport.Impairment{Bandwidth: rate, QueueLimit: 20_000})
		start := time.Now()
		for range 30 { // a burst: 20 fit in the queue, 10 overflow
			a.WriteTo(make([]byte, 1000), addrB)
		}
		var arrivals []time.Duration
		buf := make([]byte, 2048)
		for range 20 {
			if _, _, err := b.ReadFrom(buf); err != nil {
				t.Fatal(err)
			}
			arrivals = append(arrivals, time.Since(start))
		}
		for i, at := range arrivals {
			if want := time.Duration(i+1) * 100 * time.Millisecond; at != want {
				t.Fatalf("datagram %d arrived at %v, want %v (serialisation at %d B/s)", i, at, want, rate)
			}
		}
		if s := n.Stats(); s.DroppedQueue != 10 || s.Delivered != 20 {
			t.Fatalf("DroppedQueue = %d, Delivered = %d; want 10 and 20", s.DroppedQueue, s.Delivered)
		}
		// Once the queue drains, the link is idle again: no delay.
		a.WriteTo(make([]byte, 1000), addrB)
		before := time.Now()
		b.ReadFrom(buf)
		if d := time.Since(before); d != 100*time.Millisecond {
			t.Fatalf("idle link delay %v, want one serialisation time (100ms)", d)
		}
	})
}

func TestSetLinkCutsAndRestores(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := New(6)
		a, b := listen(t, n, addrA), listen(t, n, addrB)
		n.SetDefault(transport.Impairment{Latency: 10 * time.Millisecond})
		got := 0
		count := func([]byte, netip.AddrPort) { got++ }
		send := func() {
			for range 10 {
				a.WriteTo([]byte("x"), addrB)
				time.Sleep(5 * time.Millisecond)
			}
			time.Sleep(20 * time.Millisecond)
			drain(t, b, count)
		}
		send()
		if got != 10 {
			t.Fatalf("before cut: got %d, want 10", got)
		}
		n.SetLink(addrA, addrB, transport.Impairment{Loss: 1})
		got = 0
		send()
		if got != 0 {
			t.Fatalf("during cut: got %d, want 0", got)
		}
		if s := n.LinkStats(addrA, addrB); s.Sent != 20 || s.Delivered != 10 || s.DroppedLoss != 10 {
			t.Fatalf("LinkStats(A, B) = %v, want 20 sent, 10 delivered, 10 lost", s)
		}
		// The other direction is untouched.
		b.WriteTo([]byte("y"), addrA)
		time.Sleep(20 * time.Millisecond)
		back := 0
		drain(t, a, func([]byte, netip.AddrPort) { back++ })
		if back != 1 {
			t.Fatalf("reverse direction during cut: got %d, want 1", back)
		}
		n.SetLink(addrA, addrB, transport.Impairment{})
		got = 0
		send()
		if got != 10 {
			t.Fatalf("after restore: got %d, want 10", got)
		}
		if s, want := n.Stats(), n.LinkStats(addrA, addrB).Add(n.LinkStats(addrB, addrA)); s != want {
			t.Fatalf("Stats = %v, want the sum of both links %v", s, want)
		}
		if s := n.LinkStats(addrB, addrA); s.Sent != 1 || s.Delivered != 1 {
			t.Fatalf("LinkStats(B, A) = %v, want 1 sent and delivered", s)
		}
	})
}

func TestSetDefaultAppliesToExistingLinks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := New(7)
		a, b := listen(t, n, addrA), listen(t, n, addrB)
		a.WriteTo([]byte("x"), addrB) // creates the link
		n.SetDefault(transport.Impairment{Loss: 1})
		a.WriteTo([]byte("x"), addrB)
		got := 0
		drain(t, b, func([]byte, netip.AddrPort) { got++ })
		if got != 1 {
			t.Fatalf("got %d, want only the datagram sent before SetDefault", got)
		}
	})
}

func TestCloseUnblocksRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := New(8)
		a, err := n.Listen(addrA)
		if err != nil {
			t.Fatal(err)
		}
		errc := make(chan error)
		go func() {
			_, _, err := a.ReadFrom(make([]byte, 10))
			errc <- err
		}()
		synctest.Wait()
		a.Close()
		if err := <-errc; !errors.Is(err, net.ErrClosed) {
			t.Fatalf("blocked read after Close: %v, want net.ErrClosed", err)
		}
		if err := a.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		if err := a.WriteTo([]byte("x"), addrB); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("WriteTo after Close: %v", err)
		}
		if _, _, err := a.ReadFrom(nil); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("ReadFrom after Close: %v", err)
		}
		// The address is free again, and datagrams to the closed endpoint
		// are counted as unreachable.
		b := listen(t, n, addrB)
		b.WriteTo([]byte("x"), addrA)
		if s := n.Stats(); s.DroppedUnreachable != 1 {
			t.Fatalf("DroppedUnreachable = %d, want 1", s.DroppedUnreachable)
		}
		listen(t, n, addrA)
	})
}

func TestReadDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := New(9)
		a := listen(t, n, addrA)
		start := time.Now()
		a.SetReadDeadline(start.Add(time.Second))
		_, _, err := a.ReadFrom(make([]byte, 10))
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("err = %v, want os.ErrDeadlineExceeded", err)
		}
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("err = %v, want a net.Error with Timeout()", err)
		}
		if d := time.Since(start); d != time.Second {
			t.Fatalf("read returned after %v, want 1s", d)
		}

		// A deadline moved into the past stops a blocked read.
		a.SetReadDeadline(time.Time{})
		errc := make(chan error)
		go func() {
			_, _, err := a.ReadFrom(make([]byte, 10))
			errc <- err
		}()
		time.Sleep(time.Minute)
		a.SetReadDeadline(time.Now().Add(-time.Second))
		if err := <-errc; !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("err = %v, want os.ErrDeadlineExceeded", err)
		}

		// Clearing the deadline lets reads succeed again.
		a.SetReadDeadline(time.Time{})
		b := listen(t, n, addrB)
		b.WriteTo([]byte("hi"), addrA)
		if m, from, err := a.ReadFrom(make([]byte, 10)); err != nil || m != 2 || from != addrB {
			t.Fatalf("ReadFrom = %d, %v, %v", m, from, err)
		}
	})
}

func TestListen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := New(10)
		listen(t, n, addrA)
		if _, err := n.Listen(addrA); !errors.Is(err, ErrAddrInUse) {
			t.Fatalf("second Listen on %v: %v, want ErrAddrInUse", addrA, err)
		}
		ip := netip.MustParseAddr("10.0.0.9")
		seen := map[netip.AddrPort]bool{}
		for range 5 {
			c := listen(t, n, netip.AddrPortFrom(ip, 0))
			if c.LocalAddr().Port() == 0 || seen[c.LocalAddr()] || c.LocalAddr().Addr() != ip {
				t.Fatalf("port 0 gave %v", c.LocalAddr())
			}
			seen[c.LocalAddr()] = true
		}
		// An IPv4-mapped IPv6 address names the same endpoint.
		mapped := netip.AddrPortFrom(netip.AddrFrom16(addrA.Addr().As16()), addrA.Port())
		if _, err := n.Listen(mapped); !errors.Is(err, ErrAddrInUse) {
			t.Fatalf("Listen(%v): %v, want ErrAddrInUse", mapped, err)
		}
		if _, err := n.Listen(netip.AddrPort{}); err == nil {
			t.Fatal("Listen on the zero AddrPort succeeded")
		}
	})
}

func TestIPv6Endpoints(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := New(11)
		x := listen(t, n, netip.MustParseAddrPort("[2001:db8::1]:443"))
		y := listen(t, n, netip.MustParseAddrPort("[2001:db8::2]:443"))
		x.WriteTo([]byte("v6"), y.LocalAddr())
		buf := make([]byte, 10)
		m, from, err := y.ReadFrom(buf)
		if err != nil || string(buf[:m]) != "v6" || from != x.LocalAddr() {
			t.Fatalf("ReadFrom = %q, %v, %v", buf[:m], from, err)
		}
	})
}

func TestWriteCopiesAndTruncates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := New(12)
		a, b := listen(t, n, addrA), listen(t, n, addrB)
		n.SetLink(addrA, addrB, transport.Impairment{Latency: time.Millisecond})
		p := []byte("abcdef")
		a.WriteTo(p, addrB)
		copy(p, "XXXXXX") // must not affect the datagram in flight
		buf := make([]byte, 3)
		m, _, err := b.ReadFrom(buf)
		if err != nil || m != 3 || string(buf) != "abc" {
			t.Fatalf("ReadFrom = %d %q %v, want 3 \"abc\"", m, buf, err)
		}
		if err := a.WriteTo(make([]byte, MaxDatagram+1), addrB); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("oversized WriteTo: %v, want ErrTooLarge", err)
		}
		if err := a.WriteTo(p, netip.AddrPort{}); err == nil {
			t.Fatal("WriteTo the zero AddrPort succeeded")
		}
	})
}

func TestReceiveQueueOverflow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := New(13)
		n.SetReceiveQueue(10)
		a, b := listen(t, n, addrA), listen(t, n, addrB)
		for range 15 {
			a.WriteTo([]byte("x"), addrB)
		}
		got := 0
		drain(t, b, func([]byte, netip.AddrPort) { got++ })
		if s := n.Stats(); got != 10 || s.DroppedOverflow != 5 {
			t.Fatalf("got %d, DroppedOverflow %d; want 10 and 5", got, s.DroppedOverflow)
		}
	})
}

func TestNetworkClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := New(14)
		a, b := listen(t, n, addrA), listen(t, n, addrB)
		n.SetDefault(transport.Impairment{Latency: time.Second})
		a.WriteTo([]byte("x"), addrB)
		n.Close()
		if _, _, err := b.ReadFrom(nil); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("ReadFrom after Network.Close: %v", err)
		}
	})
}
