package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"io"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/netrak/netrak/netcode"
	"github.com/netrak/netrak/transport"
)

// startServer runs the command in-process and returns the address it
// listens on and a channel with its output lines; the channel closes when
// run returns, after which err holds its result.
func startServer(t *testing.T, args ...string) (netip.AddrPort, <-chan string, *error) {
	t.Helper()
	return startServerContext(t, context.Background(), args...)
}

// startServerContext is startServer with a context that, when canceled,
// interrupts the command as Ctrl-C does.
func startServerContext(t *testing.T, ctx context.Context, args ...string) (netip.AddrPort, <-chan string, *error) {
	t.Helper()
	pr, pw := io.Pipe()
	var runErr error
	go func() {
		runErr = run(ctx, args, pw)
		pw.Close()
	}()
	lines := make(chan string, 64)
	sc := bufio.NewScanner(pr)
	if !sc.Scan() {
		t.Fatalf("no output; run: %v", runErr)
	}
	first := sc.Text()
	addr, err := netip.ParseAddrPort(strings.TrimPrefix(first, "listening on "))
	if err != nil {
		t.Fatalf("first line %q: %v", first, err)
	}
	go func() {
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	return addr, lines, &runErr
}

func dial(t *testing.T, server netip.AddrPort) *netcode.ClientConn {
	t.Helper()
	key, _ := netcode.ParseKeyHex(testKeyHex)
	tok, err := netcode.GenerateConnectToken(&netcode.TokenParams{
		ClientID: 77, PublicAddresses: []netip.AddrPort{server},
		ProtocolID: 0x1122334455667788, PrivateKey: key,
	})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := transport.ListenUDP("udp4", "127.0.0.1:0", transport.UDPConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := netcode.Dial(ctx, conn, tok, netcode.ClientConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func collect(lines <-chan string) []string {
	var all []string
	for l := range lines {
		all = append(all, l)
	}
	return all
}

func TestServerCountsAndExits(t *testing.T) {
	addr, lines, runErr := startServer(t, "-addr", "127.0.0.1:0", "-count", "30", "-timeout", "20s")
	c := dial(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// The server sends the pattern at 60 Hz; check a few and send 30 back.
	for range 5 {
		m, err := c.Receive(ctx)
		if err != nil || !matches(m.Payload) {
			t.Fatalf("payload from the server: %v (%d bytes)", err, len(m.Payload))
		}
	}
	for range 30 {
		if err := c.Send(demoPayload); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	out := collect(lines)
	if *runErr != nil {
		t.Fatalf("run: %v\n%s", *runErr, strings.Join(out, "\n"))
	}
	want := []string{"client connected: slot 0, client id 0x4d", "client disconnected: slot 0, client id 0x4d, reason client disconnected", "30 passed, 0 failed"}
	if len(out) != len(want) {
		t.Fatalf("output:\n%s", strings.Join(out, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(out[i], want[i]) {
			t.Errorf("line %d = %q, want %q...", i, out[i], want[i])
		}
	}
}

func TestServerCountsMismatches(t *testing.T) {
	addr, lines, runErr := startServer(t, "-addr", "127.0.0.1:0", "-count", "3", "-timeout", "20s")
	c := dial(t, addr)
	bad := append([]byte(nil), demoPayload...)
	bad[100] ^= 1
	for _, p := range [][]byte{demoPayload, bad, demoPayload, demoPayload[:10], demoPayload} {
		if err := c.Send(p); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	out := collect(lines)
	if *runErr == nil || out[len(out)-1] != "3 passed, 2 failed" {
		t.Fatalf("run = %v, output:\n%s", *runErr, strings.Join(out, "\n"))
	}
}

func TestServerGivesUp(t *testing.T) {
	// -timeout gives up with exit 1, with or without -count.
	for _, args := range [][]string{
		{"-addr", "127.0.0.1:0", "-count", "1", "-timeout", "200ms"},
		{"-addr", "127.0.0.1:0", "-timeout", "200ms"},
	} {
		_, lines, runErr := startServer(t, args...)
		out := collect(lines)
		if *runErr == nil || !errors.Is(*runErr, context.DeadlineExceeded) || out[len(out)-1] != "0 passed, 0 failed" {
			t.Fatalf("%q: run = %v, output %q", args, *runErr, out)
		}
	}
}

func TestServerFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-key", "abcd"},
		{"-protocol-id", "x"},
		{"-count", "-1"},
		{"-public", "nonsense", "-addr", "127.0.0.1:0"},
		{"extra"},
	} {
		if err := run(context.Background(), args, io.Discard); err == nil {
			t.Errorf("run %q succeeded", args)
		}
	}
	if err := run(context.Background(), []string{"-h"}, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v", err)
	}
}

// An interrupted server disconnects the clients still connected, and says so
// with one line each, as it does for every other disconnect.
func TestServerReportsDisconnectsWhenInterrupted(t *testing.T) {
	ctx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	addr, lines, runErr := startServerContext(t, ctx, "-addr", "127.0.0.1:0", "-timeout", "20s")
	c := dial(t, addr)
	defer c.Close()
	if got := <-lines; !strings.HasPrefix(got, "client connected: slot 0, client id 0x4d") {
		t.Fatalf("first event line %q", got)
	}
	interrupt()
	out := collect(lines)
	if *runErr != nil {
		t.Fatalf("run: %v\n%s", *runErr, strings.Join(out, "\n"))
	}
	want := []string{"client disconnected: slot 0, client id 0x4d, reason server disconnected", "0 passed, 0 failed"}
	if len(out) != len(want) || out[0] != want[0] || out[1] != want[1] {
		t.Fatalf("output after the interrupt:\n%s\nwant:\n%s", strings.Join(out, "\n"), strings.Join(want, "\n"))
	}
	rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		if _, err := c.Receive(rctx); err != nil {
			if !errors.Is(err, netcode.ErrDisconnected) {
				t.Fatalf("client: %v, want ErrDisconnected", err)
			}
			break
		}
	}
}
