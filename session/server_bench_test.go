package session

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/netrak/netrak/netcode"
	"github.com/netrak/netrak/reliability"
	"github.com/netrak/netrak/transport"
)

// BenchmarkServer60Hz measures the CPU a server spends per 60 Hz tick
// with n clients, session against bare netcode in the same run. Every
// tick each client sends one 100-byte message to the server and the
// server's application sends one 100-byte message to each client:
// reliable-ordered on channel 0 for session (Conn.WriteMessage, read
// with Conn.ReadMessageInto by one goroutine per connection, as a
// net.Conn is used), plain payloads for netcode (ServerConn.Send, read
// with ServerConn.Receive by one goroutine).
//
// The server is the real thing, running on its own goroutines exactly as
// in production: a session Listener or a netcode ServerConn, with their
// socket reader and timer loop, and the application's goroutines. Only
// the socket is replaced, by benchMemConn, an in-memory transport.Conn
// whose ReadFrom and WriteTo copy a datagram under a mutex, so that
// socket system calls (about 2 µs per datagram on this machine, see
// transport's figures) are left out for both; dgrams-in/tick and
// dgrams-out/tick say how many a real socket would carry.
//
// The clients are light, so that one thread drives thousands: each is a
// netcode.Client core that writes its RakNet datagrams itself
// (benchWireClient: its message in a data datagram, and an ACK of the
// server's data datagrams since its last tick), all driven by the
// benchmark goroutine, which is locked to its OS thread. The cross-check
// session-engineclients runs a whole reliability.Engine per client,
// configured as Dial configures it, for up to 1,024 clients. Each tick
// the benchmark goroutine hands every client the datagrams the server
// wrote to it, lets it send, and queues what the clients wrote for the
// server's reader in one batch. Ticks are paced in real time by a 60 Hz
// ticker, since the server's timers (ACK delays, keep-alives, pacing)
// run on the real clock; a tick starts only once the server has finished
// the previous one (read every client message and written every reply),
// so no backlog builds up. A server that needs longer than a tick runs
// slower than 60 Hz: hz is the rate achieved and late-% the share of
// ticks that had to wait (-session.hz sets another rate, to see what the
// rate does to the cost of a tick). resends/tick counts frames resent by the
// server's engines (and by engine clients); on this lossless path it
// should be 0.
//
// Server CPU is the process's CPU time (CLOCK_PROCESS_CPUTIME_ID, user
// and system, every thread) over the measured ticks minus the benchmark
// thread's own (CLOCK_THREAD_CPUTIME_ID): everything the clients and the
// harness do runs on that locked thread, and everything else in the
// process is the server: its reader, its timer loop, its application
// goroutines, the Go scheduler's work to wake them, and the garbage
// collector. server-ns/tick is that per tick, server-%core the share of
// one core it takes at 60 Hz (server-ns/tick over 16.7 ms), and
// client-ns/tick the benchmark thread's CPU per tick.
// ns/op is the wall time of a tick (16.7 ms while the server keeps up),
// and B/op and allocs/op count the whole process.
//
//	go test -run '^$' -bench Server60Hz -benchtime 300x -count 6 -timeout 60m ./session/
func BenchmarkServer60Hz(b *testing.B) {
	for _, n := range []int{256, 1024, 4096} {
		b.Run(fmt.Sprintf("session/%d", n), func(b *testing.B) { benchServer60(b, n, benchSessionLoad{}) })
		b.Run(fmt.Sprintf("netcode/%d", n), func(b *testing.B) { benchServer60(b, n, benchNetcodeLoad{}) })
		if n <= 1024 {
			// The cross-check: the same server, with clients that run a
			// whole reliability engine each.
			b.Run(fmt.Sprintf("session-engineclients/%d", n), func(b *testing.B) {
				benchServer60(b, n, benchSessionLoad{engines: true})
			})
		}
	}
}

const (
	benchTick    = time.Second / 60
	benchPayload = 100
	benchBatch   = 512 // clients connecting at once during setup
)

// benchHz changes the tick rate, to see how the cost of a tick depends on
// it (a server that cannot keep up at 60 Hz runs slower): server-%core
// stays relative to a 60 Hz tick.
var benchHz = flag.Int("session.hz", 60, "tick rate of BenchmarkServer60Hz")

var benchServerAddr = netip.MustParseAddrPort("10.255.0.1:40000")

// benchClientAddr is client k's address; benchClientIndex inverts it.
func benchClientAddr(k int) netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, byte(k >> 16), byte(k >> 8), byte(k)}), 7000)
}

func benchClientIndex(a netip.AddrPort) int {
	b := a.Addr().As4()
	if b[0] != 10 || a.Port() != 7000 {
		return -1
	}
	return int(b[1])<<16 | int(b[2])<<8 | int(b[3])
}

// benchLoad is one kind of server with its application, and its clients.
type benchLoad interface {
	start(b *testing.B, conn transport.Conn, n int) benchServerApp
	client(b *testing.B, k int) benchLoadClient
}

// benchServerApp is a running server and its application.
type benchServerApp interface {
	// tick makes the application send one message to every client.
	tick()
	// ticksDone counts the ticks whose messages have all been written.
	ticksDone() int64
	// received counts the client messages the application has read.
	received() int64
	// ready reports whether all n clients are connected and accepted.
	ready() bool
	// resends counts the frames the server's engines resent.
	resends() uint64
	stop()
}

// benchLoadClient is one light client, driven by the benchmark goroutine.
type benchLoadClient interface {
	connect(token []byte, now time.Time) error
	connected() bool
	// step hands the client the datagrams the server sent it, runs its
	// timers, sends msg if not nil, and stages every datagram it writes.
	step(now time.Time, in [][]byte, msg []byte, out *benchStage)
	// got counts the server messages it has received.
	got() int
	// resends counts the frames its engine resent.
	resends() uint64
}

func benchServer60(b *testing.B, n int, load benchLoad) {
	if _, ok := benchThreadCPU(); !ok {
		b.Skip("needs the thread CPU-time clock (Linux)")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	mc := newBenchMemConn(benchServerAddr, n)
	app := load.start(b, mc, n)
	defer app.stop()
	clients := make([]benchLoadClient, n)
	for k := range clients {
		clients[k] = load.client(b, k)
	}

	var (
		boxes  = make([]benchBox, n) // what the server wrote, being handled
		stage  benchStage            // what the clients wrote this tick
		issued int64                 // ticks handed to the application
		late   int                   // ticks that waited for the server
		msg    = make([]byte, benchPayload)
	)
	step := func(send bool) {
		now := time.Now()
		boxes = mc.take(boxes)
		var m []byte
		if send {
			m = msg
		}
		for k, c := range clients {
			stage.from = benchClientAddr(k)
			c.step(now, boxes[k].bufs[:boxes[k].n], m, &stage)
			boxes[k].n = 0
		}
		mc.push(stage.ds)
		stage.ds = stage.ds[:0]
	}
	// wait blocks until cond holds, failing after 10 s without progress.
	wait := func(cond func() bool, what string) bool {
		if cond() {
			return false
		}
		progress := func() int64 { return app.received() + app.ticksDone() }
		last, since := progress(), time.Now()
		for !cond() {
			time.Sleep(100 * time.Microsecond)
			if p := progress(); p != last {
				last, since = p, time.Now()
			} else if time.Since(since) > 10*time.Second {
				b.Fatalf("no progress for 10 s waiting for %s (%d ticks issued, %d done, %d messages read)",
					what, issued, app.ticksDone(), app.received())
			}
		}
		return true
	}
	caughtUp := func() bool { return app.ticksDone() >= issued && app.received() >= issued*int64(n) }
	tick := func() {
		// The server must be done with the previous tick: every client
		// message read and every reply written.
		if wait(caughtUp, "the server") {
			late++
		}
		step(true)
		app.tick()
		issued++
	}

	// Connect in batches, then let the connections settle at 60 Hz.
	for first := 0; first < n; first += benchBatch {
		last := min(first+benchBatch, n)
		for k := first; k < last; k++ {
			tok := benchToken(b, uint64(k+1), benchServerAddr, netip.AddrPort{})
			if err := clients[k].connect(tok, time.Now()); err != nil {
				b.Fatal(err)
			}
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			step(false)
			ok := true
			for k := first; k < last && ok; k++ {
				ok = clients[k].connected()
			}
			if ok {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("clients %d..%d not connected after 30 s", first, last-1)
			}
			time.Sleep(time.Millisecond)
		}
	}
	for deadline := time.Now().Add(30 * time.Second); !app.ready(); {
		step(false)
		if time.Now().After(deadline) {
			b.Fatal("the server did not accept every client within 30 s")
		}
		time.Sleep(time.Millisecond)
	}
	ticker := time.NewTicker(time.Second / time.Duration(*benchHz))
	defer ticker.Stop()
	for range 60 {
		<-ticker.C
		tick()
	}
	wait(caughtUp, "the warm-up")

	got0 := 0
	for _, c := range clients {
		got0 += c.got()
	}
	in0, out0 := mc.counts()
	res0 := benchResends(app, clients)
	late, issued0 := 0, issued
	b.ReportAllocs()
	b.ResetTimer()
	proc0, _ := benchProcessCPU()
	thread0, _ := benchThreadCPU()
	for range b.N {
		<-ticker.C
		tick()
	}
	wait(caughtUp, "the last tick")
	proc1, _ := benchProcessCPU()
	thread1, _ := benchThreadCPU()
	b.StopTimer()
	wall := b.Elapsed()
	res1 := benchResends(app, clients)

	ticks := float64(issued - issued0)
	client := thread1 - thread0
	server := proc1 - proc0 - client
	in1, out1 := mc.counts()
	b.ReportMetric(float64(server.Nanoseconds())/ticks, "server-ns/tick")
	b.ReportMetric(100*float64(server)/ticks/float64(benchTick), "server-%core")
	b.ReportMetric(float64(client.Nanoseconds())/ticks, "client-ns/tick")
	b.ReportMetric(float64(in1-in0)/ticks, "dgrams-in/tick")
	b.ReportMetric(float64(out1-out0)/ticks, "dgrams-out/tick")
	b.ReportMetric(100*float64(late)/ticks, "late-%")
	b.ReportMetric(ticks/wall.Seconds(), "hz")
	b.ReportMetric(float64(res1-res0)/ticks, "resends/tick")

	// Every client stayed connected and got (almost) every tick's message;
	// the last one may still be on its way.
	got := 0
	for k, c := range clients {
		if !c.connected() {
			b.Fatalf("client %d disconnected", k)
		}
		got += c.got()
	}
	if want := int(issued-issued0-1) * n; got-got0 < want {
		b.Fatalf("clients got %d messages over %d ticks, want at least %d", got-got0, int(ticks), want)
	}
	if bad := mc.stray(); bad != 0 {
		b.Fatalf("the server wrote %d datagrams to unknown addresses", bad)
	}
}

// benchResends sums the frames resent by the server's engines and by the
// clients'.
func benchResends(app benchServerApp, clients []benchLoadClient) uint64 {
	n := app.resends()
	for _, c := range clients {
		n += c.resends()
	}
	return n
}

// benchStage collects the datagrams the clients write in a tick.
type benchStage struct {
	ds   []benchDgram
	from netip.AddrPort // the client stepping
}

// add stages a copy of d from the client stepping, reusing the buffer
// already in the slot.
func (s *benchStage) add(d []byte) {
	if len(s.ds) < cap(s.ds) {
		s.ds = s.ds[:len(s.ds)+1]
		x := &s.ds[len(s.ds)-1]
		x.b = append(x.b[:0], d...)
		x.from = s.from
		return
	}
	s.ds = append(s.ds, benchDgram{b: append([]byte(nil), d...), from: s.from})
}

type benchDgram struct {
	b    []byte
	from netip.AddrPort
}

// benchBox holds the datagrams written to one client since the last take.
type benchBox struct {
	bufs [][]byte
	n    int
}

// benchMemConn is the server's socket: an in-memory transport.Conn.
// ReadFrom takes the datagrams push queued, in order; WriteTo files each
// datagram in its client's box, which take hands over. Both copy, and
// recycle their buffers, so the steady state allocates nothing.
type benchMemConn struct {
	addr netip.AddrPort

	mu       sync.Mutex
	cond     sync.Cond
	in       []benchDgram
	head     int
	free     [][]byte
	closed   bool
	deadline time.Time
	timer    *time.Timer
	nIn      int64

	outMu sync.Mutex
	boxes []benchBox
	nOut  int64
	bad   int64
}

var _ transport.Conn = (*benchMemConn)(nil)

func newBenchMemConn(addr netip.AddrPort, n int) *benchMemConn {
	c := &benchMemConn{addr: addr, boxes: make([]benchBox, n)}
	c.cond.L = &c.mu
	return c
}

func (c *benchMemConn) LocalAddr() netip.AddrPort { return c.addr }

func (c *benchMemConn) ReadFrom(p []byte) (int, netip.AddrPort, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		if c.closed {
			return 0, netip.AddrPort{}, c.opError("read", net.ErrClosed)
		}
		if c.head < len(c.in) {
			d := c.in[c.head]
			c.in[c.head] = benchDgram{}
			c.head++
			if c.head == len(c.in) {
				c.in, c.head = c.in[:0], 0
			}
			n := copy(p, d.b)
			c.free = append(c.free, d.b)
			return n, d.from, nil
		}
		if !c.deadline.IsZero() && !time.Now().Before(c.deadline) {
			return 0, netip.AddrPort{}, c.opError("read", os.ErrDeadlineExceeded)
		}
		c.cond.Wait()
	}
}

// push queues copies of ds for ReadFrom.
func (c *benchMemConn) push(ds []benchDgram) {
	if len(ds) == 0 {
		return
	}
	c.mu.Lock()
	for _, d := range ds {
		var buf []byte
		if k := len(c.free); k > 0 {
			buf = c.free[k-1][:0]
			c.free = c.free[:k-1]
		}
		c.in = append(c.in, benchDgram{b: append(buf, d.b...), from: d.from})
	}
	c.nIn += int64(len(ds))
	c.mu.Unlock()
	c.cond.Signal()
}

func (c *benchMemConn) WriteTo(p []byte, to netip.AddrPort) error {
	k := benchClientIndex(to)
	c.outMu.Lock()
	defer c.outMu.Unlock()
	if k < 0 || k >= len(c.boxes) {
		c.bad++
		return nil
	}
	box := &c.boxes[k]
	if box.n < len(box.bufs) {
		box.bufs[box.n] = append(box.bufs[box.n][:0], p...)
	} else {
		box.bufs = append(box.bufs, append([]byte(nil), p...))
	}
	box.n++
	c.nOut++
	return nil
}

// take swaps the boxes written since the last take for spare, whose
// boxes must have been emptied (n = 0).
func (c *benchMemConn) take(spare []benchBox) []benchBox {
	c.outMu.Lock()
	defer c.outMu.Unlock()
	full := c.boxes
	c.boxes = spare
	return full
}

func (c *benchMemConn) counts() (in, out int64) {
	c.mu.Lock()
	in = c.nIn
	c.mu.Unlock()
	c.outMu.Lock()
	out = c.nOut
	c.outMu.Unlock()
	return in, out
}

func (c *benchMemConn) stray() int64 {
	c.outMu.Lock()
	defer c.outMu.Unlock()
	return c.bad
}

func (c *benchMemConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deadline = t
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	if d := time.Until(t); !t.IsZero() && d > 0 {
		c.timer = time.AfterFunc(d, func() {
			c.mu.Lock()
			c.cond.Broadcast()
			c.mu.Unlock()
		})
	}
	c.cond.Broadcast()
	return nil
}

func (c *benchMemConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.timer != nil {
		c.timer.Stop()
	}
	c.cond.Broadcast()
	return nil
}

func (c *benchMemConn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "mem", Addr: net.UDPAddrFromAddrPort(c.addr), Err: err}
}

// benchAppBase is what both servers' applications share.
type benchAppBase struct {
	ticks chan struct{}
	done  atomic.Int64
	recv  atomic.Int64
	quit  chan struct{}
	wg    sync.WaitGroup
}

func (a *benchAppBase) init() {
	a.ticks = make(chan struct{}, 4)
	a.quit = make(chan struct{})
}

func (a *benchAppBase) tick()            { a.ticks <- struct{}{} }
func (a *benchAppBase) ticksDone() int64 { return a.done.Load() }
func (a *benchAppBase) received() int64  { return a.recv.Load() }

// loop runs send once per tick on the application's game-loop goroutine.
func (a *benchAppBase) loop(send func()) {
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		for {
			select {
			case <-a.ticks:
			case <-a.quit:
				return
			}
			send()
			a.done.Add(1)
		}
	}()
}

// benchSessionLoad: a session Listener, one reader goroutine per
// connection, and session clients. The clients are netcode.Client cores
// that write RakNet datagrams themselves (benchWireClient), or, with
// engines, that each run a reliability.Engine (benchSessionClient).
type benchSessionLoad struct{ engines bool }

type benchSessionApp struct {
	benchAppBase
	l     *Listener
	mu    sync.Mutex
	conns []*Conn
	n     int
}

func (benchSessionLoad) start(b *testing.B, conn transport.Conn, n int) benchServerApp {
	cfg := ServerConfig{
		Netcode:       netcode.ServerConfig{ProtocolID: testProtocolID, PrivateKey: testKey, MaxClients: n},
		AcceptBacklog: n,
	}
	// The lightweight clients stop when the run ends: Close need not
	// wait for them to acknowledge the last messages.
	cfg.CloseTimeout = 100 * time.Millisecond
	l, err := Listen(conn, cfg)
	if err != nil {
		b.Fatal(err)
	}
	a := &benchSessionApp{l: l, conns: make([]*Conn, n)}
	a.init()
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		for {
			c, err := l.AcceptConn(context.Background())
			if err != nil {
				return
			}
			a.mu.Lock()
			a.conns[c.ClientIndex()] = c
			a.n++
			a.mu.Unlock()
			a.wg.Add(1)
			go func() {
				defer a.wg.Done()
				buf := make([]byte, 2*benchPayload)
				for {
					if _, err := c.ReadMessageInto(buf); err != nil {
						return
					}
					a.recv.Add(1)
				}
			}()
		}
	}()
	msg := make([]byte, benchPayload)
	a.loop(func() {
		a.mu.Lock()
		conns := a.conns
		a.mu.Unlock()
		for _, c := range conns {
			if c != nil {
				c.WriteMessage(msg, reliability.ReliableOrdered, 0, reliability.Medium)
			}
		}
	})
	return a
}

func (a *benchSessionApp) ready() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n == len(a.conns)
}

func (a *benchSessionApp) resends() uint64 {
	a.mu.Lock()
	conns := a.conns
	a.mu.Unlock()
	var n uint64
	for _, c := range conns {
		if c != nil {
			n += c.Stats().Reliability.Resends
		}
	}
	return n
}

func (a *benchSessionApp) stop() {
	close(a.quit)
	a.l.Close()
	a.wg.Wait()
}

func (load benchSessionLoad) client(b *testing.B, k int) benchLoadClient {
	nc, err := netcode.NewClient(netcode.ClientConfig{})
	if err != nil {
		b.Fatal(err)
	}
	if !load.engines {
		return &benchWireClient{nc: nc}
	}
	eng, err := reliability.New((&ConnConfig{}).engineConfig(zerolog.Nop()))
	if err != nil {
		b.Fatal(err)
	}
	return &benchSessionClient{nc: nc, eng: eng}
}

// benchSessionClient is a session client with a whole reliability
// engine, configured as Dial configures it; it acknowledges the server's
// data at its tick (FlushACKs), as its 10 ms ACK timer would have by then.
type benchSessionClient struct {
	nc  *netcode.Client
	eng *reliability.Engine
	n   int
	dg  []byte
}

func (c *benchSessionClient) connect(tok []byte, now time.Time) error { return c.nc.Connect(tok, now) }
func (c *benchSessionClient) connected() bool                         { return c.nc.State() == netcode.ClientConnected }
func (c *benchSessionClient) got() int                                { return c.n }
func (c *benchSessionClient) resends() uint64                         { return c.eng.Stats().Resends }

func (c *benchSessionClient) step(now time.Time, in [][]byte, msg []byte, out *benchStage) {
	for _, d := range in {
		c.nc.Receive(d, benchServerAddr, now)
		for {
			p, _, ok := c.nc.ReceivePayload()
			if !ok {
				break
			}
			c.eng.Receive(p, now)
		}
	}
	c.nc.Update(now)
	if c.connected() {
		for {
			if _, ok := c.eng.ReadMessage(); !ok {
				break
			}
			c.n++
		}
		c.eng.FlushACKs(now)
		if msg != nil {
			c.eng.Send(msg, reliability.ReliableOrdered, 0, reliability.Medium, now)
		}
		for {
			var ok bool
			if c.dg, ok = c.eng.AppendDatagram(c.dg[:0], now); !ok {
				break
			}
			c.nc.SendPayload(c.dg)
		}
	}
	for _, d := range c.nc.Outgoing() {
		out.add(d.Data)
	}
}

// benchWireClient is a session client without a reliability engine,
// light enough that one thread drives thousands at 60 Hz: each tick it
// acknowledges the server's data datagrams that arrived since its last
// tick in one ACK datagram, as a session client's 10 ms ACK timer would
// have by then, and sends its message as a reliable-ordered frame on
// channel 0 in a data datagram of its own, numbered and indexed as an
// engine would on a lossless path. The server's ACKs are not needed:
// nothing is ever resent. What the server receives is what engine
// clients send it (benchSessionClient, the cross-check), but for the
// ACK's ranges (an engine's ACK repeats the previous one's) and the data
// header's flags. It writes RakNet's wire format itself (see
// docs/protocols.md), which does not change with the packages' API:
//
//	data datagram  0x84, u24 LE datagram number, frames
//	frame          u8 kind<<5 | split<<4, u16 BE length in bits,
//	               [u24 LE reliable index] [u24 LE sequencing index]
//	               [u24 LE ordering index, u8 channel] [10 split bytes],
//	               payload
//	ACK            0xc0, u16 BE record count, records of u8 1 and a
//	               u24 LE number, or u8 0, u24 LE min and u24 LE max
type benchWireClient struct {
	nc       *netcode.Client
	n        int
	next     uint32 // datagram number
	index    uint32 // reliable and ordering index
	min, max uint32 // data datagrams to acknowledge, if any
	any      bool
	scratch  []byte
}

func (c *benchWireClient) connect(tok []byte, now time.Time) error { return c.nc.Connect(tok, now) }
func (c *benchWireClient) connected() bool                         { return c.nc.State() == netcode.ClientConnected }
func (c *benchWireClient) got() int                                { return c.n }
func (c *benchWireClient) resends() uint64                         { return 0 }

func (c *benchWireClient) step(now time.Time, in [][]byte, msg []byte, out *benchStage) {
	for _, d := range in {
		c.nc.Receive(d, benchServerAddr, now)
		for {
			p, _, ok := c.nc.ReceivePayload()
			if !ok {
				break
			}
			c.receive(p)
		}
	}
	c.nc.Update(now)
	if c.connected() {
		if c.any {
			b := append(c.scratch[:0], 0xc0, 0, 1)
			if c.min == c.max {
				b = benchU24(append(b, 1), c.min)
			} else {
				b = benchU24(benchU24(append(b, 0), c.min), c.max)
			}
			c.scratch = b
			c.nc.SendPayload(b)
			c.any = false
		}
		if msg != nil {
			const reliableOrdered = 3
			b := benchU24(append(c.scratch[:0], 0x84), c.next)
			b = append(b, reliableOrdered<<5, byte(len(msg)*8>>8), byte(len(msg)*8))
			b = append(benchU24(benchU24(b, c.index), c.index), 0)
			b = append(b, msg...)
			c.scratch = b
			c.nc.SendPayload(b)
			c.next++
			c.index++
		}
	}
	for _, d := range c.nc.Outgoing() {
		out.add(d.Data)
	}
}

// receive counts the messages of a data datagram from the server and
// notes its number for the next ACK. The server's datagrams come in order
// on this path, so one range covers them.
func (c *benchWireClient) receive(p []byte) {
	if len(p) < 4 || p[0]&0x80 == 0 || p[0]&0x60 != 0 {
		return // not a data datagram: the server's ACKs need nothing
	}
	num := uint32(p[1]) | uint32(p[2])<<8 | uint32(p[3])<<16
	if !c.any {
		c.min, c.any = num, true
	}
	c.max = num
	for f := p[4:]; len(f) >= 3; c.n++ {
		kind, split := f[0]>>5, f[0]&0x10 != 0
		bits := int(f[1])<<8 | int(f[2])
		n := 3 + (bits+7)/8
		if kind == 2 || kind == 3 || kind == 4 { // reliable
			n += 3
		}
		if kind == 1 || kind == 4 { // sequenced
			n += 3
		}
		if kind == 1 || kind == 3 || kind == 4 { // ordered or sequenced
			n += 4
		}
		if split {
			n += 10
		}
		f = f[min(n, len(f)):]
	}
}

func benchU24(b []byte, v uint32) []byte { return append(b, byte(v), byte(v>>8), byte(v>>16)) }

// benchNetcodeLoad: a netcode ServerConn, one goroutine reading every
// client's payloads, and netcode.Client cores.
type benchNetcodeLoad struct{}

type benchNetcodeApp struct {
	benchAppBase
	s *netcode.ServerConn
	n int
}

func (benchNetcodeLoad) start(b *testing.B, conn transport.Conn, n int) benchServerApp {
	s, err := netcode.ListenServer(conn, netcode.ServerConfig{ProtocolID: testProtocolID, PrivateKey: testKey, MaxClients: n})
	if err != nil {
		b.Fatal(err)
	}
	a := &benchNetcodeApp{s: s, n: n}
	a.init()
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		ctx := context.Background()
		for {
			if _, err := s.Receive(ctx); err != nil {
				return
			}
			a.recv.Add(1)
		}
	}()
	msg := make([]byte, benchPayload)
	a.loop(func() {
		for i := range n {
			s.Send(i, msg)
		}
	})
	return a
}

func (a *benchNetcodeApp) ready() bool { return a.s.ConnectedClients() == a.n }

func (a *benchNetcodeApp) resends() uint64 { return 0 }

func (a *benchNetcodeApp) stop() {
	close(a.quit)
	a.s.Close()
	a.wg.Wait()
}

func (benchNetcodeLoad) client(b *testing.B, k int) benchLoadClient {
	nc, err := netcode.NewClient(netcode.ClientConfig{})
	if err != nil {
		b.Fatal(err)
	}
	return &benchNetcodeClient{nc: nc}
}

type benchNetcodeClient struct {
	nc *netcode.Client
	n  int
}

func (c *benchNetcodeClient) connect(tok []byte, now time.Time) error { return c.nc.Connect(tok, now) }
func (c *benchNetcodeClient) connected() bool                         { return c.nc.State() == netcode.ClientConnected }
func (c *benchNetcodeClient) got() int                                { return c.n }
func (c *benchNetcodeClient) resends() uint64                         { return 0 }

func (c *benchNetcodeClient) step(now time.Time, in [][]byte, msg []byte, out *benchStage) {
	for _, d := range in {
		c.nc.Receive(d, benchServerAddr, now)
		for {
			if _, _, ok := c.nc.ReceivePayload(); !ok {
				break
			}
			c.n++
		}
	}
	c.nc.Update(now)
	if msg != nil && c.connected() {
		c.nc.SendPayload(msg)
	}
	for _, d := range c.nc.Outgoing() {
		out.add(d.Data)
	}
}
