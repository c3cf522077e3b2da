package main

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/netrak/netrak/examples/internal/refdemo"
	"github.com/netrak/netrak/netcode"
	"github.com/netrak/netrak/reliability"
	"github.com/netrak/netrak/session"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// The demo convention both sides share.
var (
	demoKey        = must(netcode.ParseKeyHex(refdemo.KeyHex))
	demoProtocolID = must(strconv.ParseUint(refdemo.ProtocolID, 0, 64))
)

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

const defaultTimeout = 30 * time.Second

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("session-echo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "", "server mode: listen on this UDP address, e.g. "+refdemo.Address)
	public := fs.String("public", "", "server mode: the address clients' tokens name, if not -listen (required when -listen is a wildcard address such as 0.0.0.0:40000)")
	maxClients := fs.Int("max-clients", netcode.DefaultMaxClients, fmt.Sprintf("server mode: client slots (1..%d)", session.MaxClients))
	connect := fs.String("connect", "", "client mode: the server's address (HOST:PORT), which the client's token names")
	internal := fs.String("internal", "", "client mode: the server's own address when -connect is a relay or proxy in front of it (the token's internal address)")
	count := fs.Int("count", 100, "client mode: messages to send")
	timeout := fs.Duration("timeout", defaultTimeout, "client mode: give up after this long, exiting 1; server mode: stop after this long if given, else run until interrupted")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: session-echo -listen ADDR [-public ADDR] [-max-clients N] [-timeout D]")
		fmt.Fprintln(stderr, "       session-echo -connect ADDR [-internal ADDR] [-count N] [-timeout D]")
		fmt.Fprintln(stderr, "")
		fmt.Fprintln(stderr, "An echo server for netcode sessions carrying RakNet reliability, and a client that")
		fmt.Fprintln(stderr, "checks the echoes. Both use the netcode reference demo key and protocol id.")
		fmt.Fprintln(stderr, "The client exits 0 only if every reliable echo came back intact and in order.")
		fmt.Fprintln(stderr, "")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	timeoutSet := false
	fs.Visit(func(f *flag.Flag) { timeoutSet = timeoutSet || f.Name == "timeout" })
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "session-echo: "+format+"\n", a...)
		fs.Usage()
		return 2
	}
	switch {
	case fs.NArg() != 0:
		return usage("unexpected arguments %q", fs.Args())
	case (*listen == "") == (*connect == ""):
		return usage("give one of -listen and -connect")
	case *timeout <= 0:
		return usage("-timeout must be positive")
	}
	if *listen != "" {
		if *maxClients < 1 || *maxClients > session.MaxClients {
			return usage("-max-clients must be in 1..%d", session.MaxClients)
		}
		var pub netip.AddrPort
		if *public != "" {
			var err error
			if pub, err = netip.ParseAddrPort(*public); err != nil {
				return usage("-public: %v", err)
			}
		}
		if !timeoutSet {
			*timeout = 0
		}
		return serve(ctx, *listen, pub, *maxClients, *timeout, stdout, stderr)
	}
	if *count < 1 {
		return usage("-count must be positive")
	}
	server, err := resolve(*connect)
	if err != nil {
		return usage("-connect: %v", err)
	}
	own := server
	if *internal != "" {
		if own, err = resolve(*internal); err != nil {
			return usage("-internal: %v", err)
		}
	}
	return client(ctx, server, own, *count, *timeout, stdout, stderr)
}

// resolve turns HOST:PORT into an address a connect token can hold.
func resolve(s string) (netip.AddrPort, error) {
	a, err := net.ResolveUDPAddr("udp", s)
	if err != nil {
		return netip.AddrPort{}, err
	}
	ap := a.AddrPort()
	if !ap.Addr().IsValid() || ap.Port() == 0 {
		return netip.AddrPort{}, fmt.Errorf("%q: need a host and a port", s)
	}
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), nil
}

// serve runs the echo server until ctx ends or, if timeout is not zero,
// for that long.
func serve(ctx context.Context, addr string, public netip.AddrPort, maxClients int, timeout time.Duration, stdout, stderr io.Writer) int {
	l, err := session.ListenUDP("udp", addr, session.ServerConfig{
		Netcode: netcode.ServerConfig{
			ProtocolID:    demoProtocolID,
			PrivateKey:    demoKey,
			PublicAddress: public,
			MaxClients:    maxClients,
		},
	})
	if err != nil {
		fmt.Fprintf(stderr, "session-echo: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "listening on %s\n", l.Addr())
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}

	// Events are printed until the listener has closed and reported the
	// disconnects its closing caused.
	eventsDone := make(chan struct{})
	go func() {
		defer close(eventsDone)
		for {
			e, err := l.NextEvent(context.Background())
			if err != nil {
				return
			}
			switch e.Kind {
			case session.EventConnected:
				fmt.Fprintf(stdout, "client connected: slot %d, client id %#x, address %v\n", e.ClientIndex, e.ClientID, e.Address)
			case session.EventDisconnected:
				fmt.Fprintf(stdout, "client disconnected: slot %d, client id %#x, reason %s\n", e.ClientIndex, e.ClientID, reason(e.Reason))
			}
		}
	}()

	var echoes sync.WaitGroup
	var echoed atomic.Uint64
	code := 0
	for {
		c, err := l.AcceptConn(ctx)
		if err != nil {
			if ctx.Err() == nil {
				// The socket failed; an interrupt or -timeout is the
				// normal end of a server.
				fmt.Fprintf(stderr, "session-echo: %v\n", err)
				code = 1
			}
			break
		}
		echoes.Go(func() { echo(c, &echoed) })
	}
	l.Close() // closes each client's connection gracefully first
	echoes.Wait()
	<-eventsDone
	fmt.Fprintf(stdout, "stopped: %d messages echoed\n", echoed.Load())
	return code
}

// reason describes why a client left, as an Event reports it.
func reason(err error) string {
	switch {
	case err == nil:
		return "closed by the server"
	case errors.Is(err, session.ErrPeerClosed):
		return "client disconnected"
	case errors.Is(err, session.ErrTimedOut):
		return "timed out"
	case errors.Is(err, session.ErrConnectionLost):
		return "connection lost"
	case errors.Is(err, session.ErrBacklogFull):
		return "accept backlog full"
	case errors.Is(err, session.ErrServerClosed):
		return "server shut down"
	}
	return err.Error()
}

// echo sends every message of c back with the reliability and channel it
// arrived with, until the client leaves or the server closes. Messages
// are read into one reused buffer, since WriteMessage copies.
func echo(c *session.Conn, echoed *atomic.Uint64) {
	defer c.Close()
	var buf []byte
	for {
		m, err := c.ReadMessageInto(buf)
		if err != nil {
			return
		}
		buf = m.Data
		if _, err := c.WriteMessage(m.Data, m.Reliability, m.Channel, reliability.Medium); err != nil {
			return
		}
		echoed.Add(1)
	}
}

// kind is how a message travels.
type kind struct {
	rel     reliability.Reliability
	channel uint8
}

// orderedChannels carry the reliable-ordered messages; seqChannel, a
// channel of its own, the unreliable-sequenced ones, which would otherwise
// be held behind any ordered message on their channel still missing.
const (
	orderedChannels = 4
	seqChannel      = 4
)

// plan is the cycle of kinds message i takes its own from.
var plan = [...]kind{
	{reliability.ReliableOrdered, 0},
	{reliability.Reliable, 0},
	{reliability.ReliableOrdered, 1},
	{reliability.UnreliableSequenced, seqChannel},
	{reliability.ReliableOrdered, 2},
	{reliability.Unreliable, 0},
	{reliability.ReliableOrdered, 3},
	{reliability.Reliable, 0},
}

// The size cycles have lengths prime to len(plan), so every kind meets
// every size. Reliable messages above about 1190 bytes are split; the
// unreliable ones never are, since the engine would send a split
// unreliable message reliably, and all of them hold an index.
var (
	reliableSizes   = [...]int{1, 2, 7, 33, 100, 576, 1100, 1400, 5000, 20000, 64 << 10}
	unreliableSizes = [...]int{4, 16, 100, 576, 1000}
)

func kindOf(i int) kind { return plan[i%len(plan)] }

func size(i int) int {
	if kindOf(i).rel.IsReliable() {
		return reliableSizes[i%len(reliableSizes)]
	}
	return unreliableSizes[i%len(unreliableSizes)]
}

// message builds message i: its index as a little-endian u32 if there is
// room, then bytes that depend on i.
func message(i int) []byte {
	b := make([]byte, size(i))
	k := 0
	if len(b) >= 4 {
		binary.LittleEndian.PutUint32(b, uint32(i))
		k = 4
	}
	for ; k < len(b); k++ {
		b[k] = byte(i*31 + k*7 + 1)
	}
	return b
}

// reliableCount is how many of the first n messages are reliable.
func reliableCount(n int) int {
	r := 0
	for i := range n {
		if kindOf(i).rel.IsReliable() {
			r++
		}
	}
	return r
}

// client sends count messages through the server at addr (known to
// itself as own) and checks the echoes.
func client(ctx context.Context, addr, own netip.AddrPort, count int, timeout time.Duration, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ck := newChecker(count, stderr)
	token, err := mintToken(addr, own)
	if err == nil {
		var c *session.Conn
		if c, err = session.Dial(ctx, token, session.ClientConfig{Netcode: netcode.ClientConfig{ProtocolID: demoProtocolID}}); err == nil {
			return exchange(ctx, c, ck, timeout, stdout, stderr)
		}
	}
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		fmt.Fprintf(stderr, "session-echo: timed out after %v while connecting\n", timeout)
	} else {
		fmt.Fprintf(stderr, "session-echo: connect: %v\n", err)
	}
	fmt.Fprintf(stdout, "0 passed, %d failed\n", ck.reliable)
	return 1
}

// mintToken does what a game's web backend does for a player it has
// authenticated.
func mintToken(addr, own netip.AddrPort) ([]byte, error) {
	var id [8]byte
	rand.Read(id[:])
	return netcode.GenerateConnectToken(&netcode.TokenParams{
		ClientID:          binary.LittleEndian.Uint64(id[:]),
		PublicAddresses:   []netip.AddrPort{addr},
		InternalAddresses: []netip.AddrPort{own},
		Expiry:            refdemo.TokenExpiry,
		Timeout:           refdemo.TokenTimeout,
		ProtocolID:        demoProtocolID,
		PrivateKey:        demoKey,
	})
}

// exchange runs a connected client: it sends the messages, checks the
// echoes, closes and reports.
func exchange(ctx context.Context, c *session.Conn, ck *checker, timeout time.Duration, stdout, stderr io.Writer) int {
	fmt.Fprintf(stdout, "connected to %v, slot %d\n", c.RemoteAddr(), c.ClientIndex())
	// The end of ctx (-timeout, an interrupt) unblocks reads and writes.
	stopInterrupt := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	defer stopInterrupt()

	writeDone := make(chan error, 1)
	go func() {
		for i := range ck.count {
			k := kindOf(i)
			if _, err := c.WriteMessage(message(i), k.rel, k.channel, reliability.Medium); err != nil {
				writeDone <- err
				return
			}
		}
		writeDone <- nil
	}()

	var readErr error
	var buf []byte // echoes are read into one reused buffer
	for ck.arrivals < ck.reliable {
		m, err := c.ReadMessageInto(buf)
		if err != nil {
			readErr = err
			break
		}
		buf = m.Data
		ck.check(m)
	}
	var writeErr error
	if readErr == nil {
		// Every reliable echo is in, so the writer is done or about to
		// be. Unreliable echoes sent after the last reliable one are
		// given a few round trips to arrive; any still missing are lost.
		writeErr = <-writeDone
		grace := time.Now().Add(max(4*c.RTT(), 100*time.Millisecond))
		if ctx.Err() == nil {
			c.SetReadDeadline(grace)
		}
		for ck.unreliableBack < ck.unreliable {
			m, err := c.ReadMessageInto(buf)
			if err != nil {
				break
			}
			buf = m.Data
			ck.check(m)
		}
	}
	st := c.Stats()
	c.Close() // graceful: the server has everything acknowledged, then hears goodbye

	if readErr != nil {
		if errors.Is(readErr, os.ErrDeadlineExceeded) && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			fmt.Fprintf(stderr, "session-echo: timed out after %v\n", timeout)
		} else {
			fmt.Fprintf(stderr, "session-echo: %v\n", readErr)
		}
	}
	if writeErr != nil {
		fmt.Fprintf(stderr, "session-echo: write: %v\n", writeErr)
	}
	fmt.Fprintf(stderr, "session-echo: RTT %v, %d resends; netcode packets %d sent, %d received, keep-alives %d sent, %d received\n",
		st.Reliability.SmoothedRTT, st.Reliability.Resends, st.PacketsSent, st.PacketsReceived, st.KeepAlivesSent, st.KeepAlivesReceived)
	fmt.Fprintln(stdout, ck.unreliableLine())
	failed := ck.reliable - ck.passed + ck.unexpected
	fmt.Fprintf(stdout, "%d passed, %d failed\n", ck.passed, failed)
	if failed > 0 || ck.malformed > 0 || ck.backwards > 0 || writeErr != nil {
		return 1
	}
	return 0
}
