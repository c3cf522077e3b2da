package main

import (
	"context"
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
	"syscall"
	"time"

	"github.com/netrak/netrak/examples/internal/refdemo"
	"github.com/netrak/netrak/netcode"
	"github.com/netrak/netrak/transport"
)

// The demo convention of the reference programs.
const (
	testKeyHex        = refdemo.KeyHex
	testProtocolID    = refdemo.ProtocolID
	defaultAddress    = refdemo.Address
	payloadsPerSecond = refdemo.PayloadsPerSecond
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "netcode-server:", err)
		os.Exit(1)
	}
}

// errFailed is returned when the run counted failures; the summary line
// has already said how many.
var errFailed = errors.New("failed")

type options struct {
	addr       string
	public     string
	key        netcode.Key
	protocolID uint64
	timeout    time.Duration
	count      int
	maxClients int
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("netcode-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &options{}
	var keyHex, protocol string
	fs.StringVar(&o.addr, "addr", defaultAddress, "address to bind (port 0 picks one)")
	fs.StringVar(&o.public, "public", "", "address clients' tokens name, if not the bind address (required with a wildcard bind such as 0.0.0.0:40000)")
	fs.StringVar(&keyHex, "key", testKeyHex, "private key shared with the token issuer, 64 hex digits")
	fs.StringVar(&protocol, "protocol-id", testProtocolID, "protocol id (decimal or 0x hex)")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Second, "give up, exiting 1, after this long (whether or not -count was reached); 0 means never")
	fs.IntVar(&o.count, "count", 0, "exit 0 after receiving this many matching payloads once no client is connected; 0 means run until interrupted")
	fs.IntVar(&o.maxClients, "max-clients", netcode.DefaultMaxClients, "client slots")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	var err error
	if o.key, err = netcode.ParseKeyHex(keyHex); err != nil {
		return nil, fmt.Errorf("-key: %w", err)
	}
	if o.protocolID, err = strconv.ParseUint(protocol, 0, 64); err != nil {
		return nil, fmt.Errorf("-protocol-id: %w", err)
	}
	if o.count < 0 || o.timeout < 0 || o.maxClients < 1 {
		return nil, errors.New("-count and -timeout must not be negative, -max-clients must be positive")
	}
	return o, nil
}

// demoPayload is the reference programs' payload: byte i is i mod 256.
var demoPayload = refdemo.Payload

func matches(p []byte) bool { return refdemo.Matches(p) }

func run(ctx context.Context, args []string, stdout io.Writer) error {
	o, err := parseFlags(args, os.Stderr)
	if err != nil {
		return err
	}
	conn, err := transport.ListenUDP("udp", o.addr, transport.UDPConfig{})
	if err != nil {
		return err
	}
	cfg := netcode.ServerConfig{ProtocolID: o.protocolID, PrivateKey: o.key, MaxClients: o.maxClients}
	if o.public != "" {
		if cfg.PublicAddress, err = netip.ParseAddrPort(o.public); err != nil {
			conn.Close()
			return fmt.Errorf("-public: %w", err)
		}
	}
	s, err := netcode.ListenServer(conn, cfg) // owns conn from here on, failing or not
	if err != nil {
		return err
	}
	defer s.Close()
	fmt.Fprintf(stdout, "listening on %v\n", s.LocalAddr())

	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.timeout)
		defer cancel()
	}

	var (
		mu             sync.Mutex
		connected      = map[int]bool{}
		passed, failed int
		wg             sync.WaitGroup
		leaving        bool          // set once the main loop has ended
		allGone        chan struct{} // closed when leaving and no client is left
		goneOnce       sync.Once
	)
	allGone = make(chan struct{})
	wg.Add(2)
	go func() { // events: print them and track the slots to send to
		defer wg.Done()
		for {
			e, err := s.NextEvent(context.Background())
			if err != nil {
				return
			}
			mu.Lock()
			switch e.Kind {
			case netcode.EventConnected:
				connected[e.ClientIndex] = true
				fmt.Fprintf(stdout, "client connected: slot %d, client id %#x, address %v\n", e.ClientIndex, e.ClientID, e.Address)
			case netcode.EventDisconnected:
				delete(connected, e.ClientIndex)
				fmt.Fprintf(stdout, "client disconnected: slot %d, client id %#x, reason %v\n", e.ClientIndex, e.ClientID, e.Reason)
				if leaving && len(connected) == 0 {
					goneOnce.Do(func() { close(allGone) })
				}
			}
			mu.Unlock()
		}
	}()
	go func() { // payloads: count the matching ones
		defer wg.Done()
		for {
			m, err := s.Receive(context.Background())
			if err != nil {
				return
			}
			mu.Lock()
			if matches(m.Payload) {
				passed++
			} else {
				failed++
			}
			mu.Unlock()
		}
	}()

	tick := time.NewTicker(time.Second / payloadsPerSecond)
	defer tick.Stop()
	var result error
loop:
	for {
		select {
		case <-ctx.Done():
			// -timeout always gives up with exit 1; an interrupt (SIGINT or
			// SIGTERM) without -count is the normal way to stop a server.
			if o.count > 0 || errors.Is(ctx.Err(), context.DeadlineExceeded) {
				result = fmt.Errorf("gave up: %w", context.Cause(ctx))
			}
			break loop
		case <-tick.C:
		}
		mu.Lock()
		for i := range connected {
			// A client may have left since its event; that is not an error.
			s.Send(i, demoPayload)
		}
		done := o.count > 0 && passed >= o.count && len(connected) == 0 && s.ConnectedClients() == 0
		mu.Unlock()
		if done {
			break
		}
	}
	// Disconnect the clients still here before closing, so that their
	// events are printed: Close discards events nobody has taken yet.
	mu.Lock()
	leaving = true
	for i := range connected {
		s.Disconnect(i) // a client that has just left already has its event
	}
	empty := len(connected) == 0
	mu.Unlock()
	if !empty {
		select {
		case <-allGone:
		case <-time.After(time.Second): // an event lost to overflow must not hang the exit
		}
	}
	closeErr := s.Close()
	wg.Wait()
	fmt.Fprintf(stdout, "%d passed, %d failed\n", passed, failed)
	switch {
	case result != nil:
		return result
	case failed > 0:
		return errFailed
	case closeErr != nil && !errors.Is(closeErr, net.ErrClosed):
		return closeErr
	}
	return nil
}
