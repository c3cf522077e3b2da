package session

import (
	"context"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/netrak/netrak/netcode"
	"github.com/netrak/netrak/raknet"
	"github.com/netrak/netrak/reliability"
	"github.com/netrak/netrak/transport"
)

// BenchmarkMessageLoopback is the per-message cost of the three ways to
// carry a game's messages, side by side in one run: session (netcode's
// encryption carrying RakNet's reliability layer), plain raknet, and bare
// netcode payloads (no reliability). One dialer sends to one listener
// over IPv4 loopback UDP; an op is one message written by the sender and
// read by the receiver, and the clock stops when the receiver has read
// the last one. session and raknet send reliable-ordered messages on
// channel 0 (WriteMessage) and read them with ReadMessageInto into one
// reused buffer; netcode sends with ClientConn.Send and reads with
// ServerConn.Receive, which returns a fresh copy of each payload.
//
// All three are held to raknet's BenchmarkLoopbackThroughput window (at
// most 256 messages, and 256 KiB, written and not yet read), so that no
// socket buffer overflows (netcode would lose payloads, not resend them),
// and all three are warmed up with benchWarmup messages before the clock
// starts, so that B/op and allocs/op are the steady state: the pools,
// rings and queues of every layer have grown to their working size.
// B/op and allocs/op count every goroutine of the process, the
// connections' readers and timers included; allocs/Mmsg is the exact
// count per million messages, which allocs/op rounds down.
//
// ns/op is wall time, which other work on the machine inflates.
// cpu-ns/msg is the process's CPU time per message (Linux): both ends,
// every goroutine, the system calls included; other processes affect it
// far less than wall time, though they still change how often goroutines
// park and how warm the caches are. resends/Mmsg counts the
// frames the sender resent per million messages; on loopback it is 0
// unless the sender's retransmission timer expired, on a loaded machine.
//
//	go test -run '^$' -bench MessageLoopback -benchtime 200000x -count 6 ./session/
func BenchmarkMessageLoopback(b *testing.B) {
	for _, size := range []int{64, 1024} {
		b.Run(fmt.Sprintf("session/%dB", size), func(b *testing.B) { benchMessages(b, size, benchSessionPair) })
		b.Run(fmt.Sprintf("raknet/%dB", size), func(b *testing.B) { benchMessages(b, size, benchRaknetPair) })
		b.Run(fmt.Sprintf("netcode/%dB", size), func(b *testing.B) { benchMessages(b, size, benchNetcodePair) })
	}
}

// benchWarmup messages go through before the clock starts.
const benchWarmup = 20000

// benchStall: a run whose reader made no progress for this long fails
// instead of hanging.
const benchStall = 10 * time.Second

// benchPair is a connected sender and receiver: send writes one message,
// recv reads one (into buf where the API allows), stop closes both.
type benchPair struct {
	send func(msg []byte) error
	recv func(buf []byte) error
	stop func()
	// resends, if set, counts the frames the sender resent.
	resends func() uint64
}

func benchMessages(b *testing.B, size int, open func(b *testing.B) benchPair) {
	p := open(b)
	defer p.stop()
	msg := make([]byte, size)
	msg[0] = raknet.IDUserPacketEnum // raknet's first byte of a user message; the others don't care

	window := make(chan struct{}, max(1, min(256, (256<<10)/size)))
	var read atomic.Int64
	stalled := make(chan struct{})
	stopWatch := make(chan struct{})
	defer close(stopWatch)
	go func() {
		tick := time.NewTicker(benchStall)
		defer tick.Stop()
		last := int64(-1)
		for {
			select {
			case <-stopWatch:
				return
			case <-tick.C:
			}
			if n := read.Load(); n != last {
				last = n
				continue
			}
			close(stalled)
			return
		}
	}()

	// One reader goroutine for the warm-up and the timed messages.
	total := benchWarmup + b.N
	warm := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		buf := make([]byte, size)
		for i := range total {
			if err := p.recv(buf); err != nil {
				done <- fmt.Errorf("read %d: %w", i, err)
				return
			}
			<-window
			read.Add(1)
			if i == benchWarmup-1 {
				close(warm)
			}
		}
		done <- nil
	}()
	send := func(n int) {
		for range n {
			select {
			case window <- struct{}{}:
			case <-stalled:
				b.Fatalf("the reader made no progress for %v (%d of %d read)", benchStall, read.Load(), total)
			}
			if err := p.send(msg); err != nil {
				b.Fatal(err)
			}
		}
	}
	wait := func(ch <-chan struct{}) {
		select {
		case <-ch:
		case err := <-done:
			b.Fatal(err)
		case <-stalled:
			b.Fatalf("the reader made no progress for %v (%d of %d read)", benchStall, read.Load(), total)
		}
	}

	send(benchWarmup)
	wait(warm)
	var res0 uint64
	if p.resends != nil {
		res0 = p.resends()
	}
	benchAllocSnapshot(b, "start")
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, cpuOK := benchProcessCPU()
	send(b.N)
	select {
	case err := <-done:
		if err != nil {
			b.Fatal(err)
		}
	case <-stalled:
		b.Fatalf("the reader made no progress for %v (%d of %d read)", benchStall, read.Load(), total)
	}
	cpu1, _ := benchProcessCPU()
	b.StopTimer()
	runtime.ReadMemStats(&m1)
	benchAllocSnapshot(b, "end")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	if cpuOK {
		// Both ends run in this process: the CPU time of one message sent,
		// carried and read, every goroutine and system call included.
		b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/msg")
	}
	// allocs/op rounds down; this is the exact count, per million.
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)*1e6/float64(b.N), "allocs/Mmsg")
	if p.resends != nil {
		b.ReportMetric(float64(p.resends()-res0)*1e6/float64(b.N), "resends/Mmsg")
	}
}

// benchAllocProfile names the allocation profiles written at the start
// and the end of each timed run, to find where steady-state allocations
// come from; run with -memprofilerate 1 so that every allocation is
// recorded, then compare the two:
//
//	go test -run '^$' -bench 'MessageLoopback/session/64B' -benchtime 1000000x \
//		-memprofilerate 1 -session.allocprofile /tmp/a ./session/
//	go tool pprof -sample_index=alloc_objects -top -diff_base /tmp/a-session-64B-start.pprof /tmp/a-session-64B-end.pprof
var benchAllocProfile = flag.String("session.allocprofile", "", "`prefix` of the allocation profiles BenchmarkMessageLoopback writes around its timed part")

func benchAllocSnapshot(b *testing.B, when string) {
	if *benchAllocProfile == "" {
		return
	}
	runtime.GC() // the profile is as of the last collection
	name := fmt.Sprintf("%s-%s-%s.pprof", *benchAllocProfile, strings.ReplaceAll(strings.TrimPrefix(b.Name(), "BenchmarkMessageLoopback/"), "/", "-"), when)
	f, err := os.Create(name)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		b.Fatal(err)
	}
}

// benchToken mints a connect token for one client of a server at addr.
// internal, if valid, is the address the server knows itself by, when
// the client reaches it through a relay at addr.
func benchToken(tb testing.TB, id uint64, addr, internal netip.AddrPort) []byte {
	tb.Helper()
	p := &netcode.TokenParams{ClientID: id, ProtocolID: testProtocolID, PrivateKey: testKey,
		PublicAddresses: []netip.AddrPort{addr}}
	if internal.IsValid() {
		p.InternalAddresses = []netip.AddrPort{internal}
	}
	tok, err := netcode.GenerateConnectToken(p)
	if err != nil {
		tb.Fatal(err)
	}
	return tok
}

// benchSessionServer starts a session Listener on loopback UDP and
// returns it with the first connection it accepts, through accepted.
func benchSessionServer(tb testing.TB) (*Listener, <-chan *Conn) {
	tb.Helper()
	l, err := ListenUDP("udp4", "127.0.0.1:0", ServerConfig{
		Netcode: netcode.ServerConfig{ProtocolID: testProtocolID, PrivateKey: testKey},
	})
	if err != nil {
		tb.Fatal(err)
	}
	accepted := make(chan *Conn, 1)
	go func() {
		c, err := l.AcceptConn(context.Background())
		if err == nil {
			accepted <- c
		}
		close(accepted)
	}()
	return l, accepted
}

func benchSessionPair(b *testing.B) benchPair {
	l, accepted := benchSessionServer(b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, benchToken(b, 1, l.tc.LocalAddr(), netip.AddrPort{}), ClientConfig{})
	if err != nil {
		l.Close()
		b.Fatal(err)
	}
	var s *Conn
	select {
	case s = <-accepted:
	case <-ctx.Done():
	}
	if s == nil {
		c.Close()
		l.Close()
		b.Fatal("the server accepted no connection")
	}
	return benchPair{
		send: func(msg []byte) error {
			_, err := c.WriteMessage(msg, reliability.ReliableOrdered, 0, reliability.Medium)
			return err
		},
		recv: func(buf []byte) error {
			_, err := s.ReadMessageInto(buf)
			return err
		},
		stop: func() {
			c.Close()
			l.Close()
		},
		resends: func() uint64 { return c.Stats().Reliability.Resends },
	}
}

func benchRaknetPair(b *testing.B) benchPair {
	l, err := raknet.Listen("udp4", "127.0.0.1:0", raknet.ListenConfig{})
	if err != nil {
		b.Fatal(err)
	}
	accepted := make(chan *raknet.Conn, 1)
	go func() {
		c, err := l.AcceptConn(context.Background())
		if err == nil {
			accepted <- c
		}
		close(accepted)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := raknet.DialContext(ctx, "udp", l.Addr().String())
	if err != nil {
		l.Close()
		b.Fatal(err)
	}
	var s *raknet.Conn
	select {
	case s = <-accepted:
	case <-ctx.Done():
	}
	if s == nil {
		c.Close()
		l.Close()
		b.Fatal("the server accepted no connection")
	}
	return benchPair{
		send: func(msg []byte) error {
			_, err := c.WriteMessage(msg, reliability.ReliableOrdered, 0, reliability.Medium)
			return err
		},
		recv: func(buf []byte) error {
			_, err := s.ReadMessageInto(buf)
			return err
		},
		stop: func() {
			c.Close()
			l.Close()
		},
		resends: func() uint64 { return c.Stats().Resends },
	}
}

func benchNetcodePair(b *testing.B) benchPair {
	sc, err := transport.ListenUDP("udp4", "127.0.0.1:0", transport.UDPConfig{})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := netcode.ListenServer(sc, netcode.ServerConfig{ProtocolID: testProtocolID, PrivateKey: testKey})
	if err != nil {
		b.Fatal(err)
	}
	cc, err := transport.ListenUDP("udp4", "127.0.0.1:0", transport.UDPConfig{})
	if err != nil {
		srv.Close()
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := netcode.Dial(ctx, cc, benchToken(b, 1, srv.LocalAddr(), netip.AddrPort{}), netcode.ClientConfig{})
	if err != nil {
		srv.Close()
		b.Fatal(err)
	}
	bg := context.Background()
	return benchPair{
		send: c.Send,
		recv: func([]byte) error {
			_, err := srv.Receive(bg)
			return err
		},
		stop: func() {
			c.Close()
			srv.Close()
		},
	}
}
