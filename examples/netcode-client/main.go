package main

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/signal"
	"strconv"
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
	tokenExpiry       = refdemo.TokenExpiry
	tokenTimeout      = refdemo.TokenTimeout
	payloadsPerSecond = refdemo.PayloadsPerSecond
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "netcode-client:", err)
		os.Exit(1)
	}
}

type options struct {
	addr       netip.AddrPort
	key        netcode.Key
	protocolID uint64
	timeout    time.Duration
	count      int
	tokenFile  string
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("netcode-client", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &options{}
	var addr, keyHex, protocol string
	fs.StringVar(&addr, "addr", defaultAddress, "server address to put in the generated token")
	fs.StringVar(&keyHex, "key", testKeyHex, "private key to seal the generated token with, 64 hex digits")
	fs.StringVar(&protocol, "protocol-id", testProtocolID, "protocol id (decimal or 0x hex)")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Second, "give up, exiting 1, after this long; 0 means never")
	fs.IntVar(&o.count, "count", 0, "disconnect and exit 0 after this many matching payloads; 0 means run until the connection ends")
	fs.StringVar(&o.tokenFile, "token", "", "read a 2048-byte connect token from this file instead of generating one")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	var err error
	if o.addr, err = netip.ParseAddrPort(addr); err != nil {
		return nil, fmt.Errorf("-addr: %w", err)
	}
	if o.key, err = netcode.ParseKeyHex(keyHex); err != nil {
		return nil, fmt.Errorf("-key: %w", err)
	}
	if o.protocolID, err = strconv.ParseUint(protocol, 0, 64); err != nil {
		return nil, fmt.Errorf("-protocol-id: %w", err)
	}
	if o.count < 0 || o.timeout < 0 {
		return nil, errors.New("-count and -timeout must not be negative")
	}
	return o, nil
}

// token reads -token or mints a token as the reference client does.
func (o *options) token() ([]byte, error) {
	if o.tokenFile != "" {
		b, err := os.ReadFile(o.tokenFile)
		if err != nil {
			return nil, err
		}
		if len(b) != netcode.ConnectTokenBytes {
			return nil, fmt.Errorf("-token %s: %d bytes, want %d", o.tokenFile, len(b), netcode.ConnectTokenBytes)
		}
		return b, nil
	}
	var id [8]byte
	rand.Read(id[:])
	p := &netcode.TokenParams{
		ClientID:        binary.LittleEndian.Uint64(id[:]),
		PublicAddresses: []netip.AddrPort{o.addr},
		Expiry:          tokenExpiry,
		Timeout:         tokenTimeout,
		ProtocolID:      o.protocolID,
		PrivateKey:      o.key,
	}
	rand.Read(p.UserData[:])
	return netcode.GenerateConnectToken(p)
}

// demoPayload is the reference programs' payload: byte i is i mod 256.
var demoPayload = refdemo.Payload

func matches(p []byte) bool { return refdemo.Matches(p) }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	tok, err := o.token()
	if err != nil {
		return err
	}
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.timeout)
		defer cancel()
	}
	var ct netcode.ConnectToken
	network := "udp"
	if _, err := netcode.ParseConnectToken(tok, &ct); err == nil && allIPv4(ct.ServerAddresses) {
		network = "udp4"
	}
	conn, err := transport.ListenUDP(network, ":0", transport.UDPConfig{})
	if err != nil {
		return err
	}
	c, err := netcode.Dial(ctx, conn, tok, netcode.ClientConfig{ProtocolID: o.protocolID})
	if err != nil {
		fmt.Fprintf(stdout, "connection failed: %v\n", err)
		fmt.Fprintf(stdout, "0 passed, 0 failed\n")
		return fmt.Errorf("connect: %w", err)
	}
	fmt.Fprintf(stdout, "connected to %v: slot %d of %d\n", c.RemoteAddr(), c.ClientIndex(), c.MaxClients())

	type counts struct {
		passed, failed int
		end            error // why receiving stopped
	}
	progress := make(chan counts, 1)
	go func() {
		var n counts
		for {
			m, err := c.Receive(ctx)
			if err != nil {
				n.end = err
				progress <- n
				return
			}
			if matches(m.Payload) {
				n.passed++
			} else {
				n.failed++
			}
			if o.count > 0 && n.passed >= o.count {
				progress <- n
				return
			}
		}
	}()

	// The first payload goes out at once, then one every tick. With -count
	// the client also sends at least N payloads before leaving, so a server
	// run with the same -count gets its N too.
	tick := time.NewTicker(time.Second / payloadsPerSecond)
	defer tick.Stop()
	var n counts
	sent, received := 0, false
loop:
	for !received || (n.end == nil && sent < o.count) {
		if err := c.Send(demoPayload); err == nil {
			sent++
		} else if received {
			break // the connection ended
		}
		select {
		case n = <-progress:
			received = true
		case <-tick.C:
		case <-ctx.Done():
			if !received {
				n = <-progress // Receive returns promptly with ctx's error
			}
			break loop
		}
	}
	reason := c.State().String()
	switch {
	case n.end == nil || errors.Is(n.end, ctx.Err()):
		c.Close() // clean disconnect: redundant disconnect packets
		reason = "client disconnected"
	case errors.Is(n.end, netcode.ErrDisconnected):
		reason = "server disconnected"
	}
	fmt.Fprintf(stdout, "disconnected: %s\n", reason)
	c.Close()
	fmt.Fprintf(stdout, "%d passed, %d failed\n", n.passed, n.failed)
	switch {
	case n.failed > 0:
		return errors.New("failed")
	case n.end != nil && (o.count > 0 && ctx.Err() != nil || errors.Is(ctx.Err(), context.DeadlineExceeded)):
		return fmt.Errorf("gave up after %d of %d payloads: %w", n.passed, o.count, context.Cause(ctx))
	case n.end != nil && ctx.Err() == nil && (o.count > 0 || c.State() < netcode.ClientDisconnected):
		return fmt.Errorf("connection ended: %w", n.end)
	}
	return nil
}

func allIPv4(addrs []netip.AddrPort) bool {
	for _, a := range addrs {
		if !a.Addr().Unmap().Is4() {
			return false
		}
	}
	return true
}
