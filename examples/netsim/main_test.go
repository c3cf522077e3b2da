package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"math"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/netrak/netrak/transport"
	"github.com/netrak/netrak/transport/transporttest"
)

// syncBuffer is a bytes.Buffer safe to write from run's goroutine and read
// from the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func listenUDP(t *testing.T) *transport.UDPConn {
	t.Helper()
	c, err := transport.ListenUDP("udp4", "127.0.0.1:0", transport.UDPConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func read(c *transport.UDPConn, buf []byte, timeout time.Duration) (int, netip.AddrPort, error) {
	c.SetReadDeadline(time.Now().Add(timeout))
	defer c.SetReadDeadline(time.Time{})
	return c.ReadFrom(buf)
}

// TestRelaysWithImpairments runs netsim against real loopback sockets with
// latency both ways and loss upstream only, and checks the round trip
// time, the loss rate and the counters printed on exit.
func TestRelaysWithImpairments(t *testing.T) {
	server := listenUDP(t)
	client := listenUDP(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	addrc := make(chan netip.AddrPort, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{
			"-listen", "127.0.0.1:0", "-target", server.LocalAddr().String(),
			"-latency", "15ms", "-up-loss", "0.4", "-seed", "7",
		}, &stdout, &stderr, func(a netip.AddrPort) { addrc <- a })
	}()
	var relayAddr netip.AddrPort
	select {
	case relayAddr = <-addrc:
	case err := <-done:
		t.Fatalf("run failed early: %v\n%s", err, stderr.String())
	}

	// Loss: numbered datagrams upstream, in rounds small enough for any
	// socket buffer (see transporttest.ProbeLoss).
	const total, loss = 2000, 0.4
	p := transporttest.ProbeLoss(t, client, server, relayAddr, total)
	if rate, tol := p.LossRate(), 5*math.Sqrt(loss*(1-loss)/total); math.Abs(rate-loss) > tol {
		t.Errorf("upstream loss rate %.3f, want %.2f ± %.3f", rate, loss, tol)
	}
	buf := make([]byte, 64)

	// Latency: a ping that survives the upstream loss, and its pong, each
	// take at least 15ms.
	var rtt time.Duration
	for attempt := 0; attempt < 50 && rtt == 0; attempt++ {
		start := time.Now()
		client.WriteTo([]byte("ping"), relayAddr)
		n, from, err := read(server, buf, 300*time.Millisecond)
		if err != nil || string(buf[:n]) != "ping" {
			continue // lost upstream
		}
		server.WriteTo([]byte("pong"), from)
		n, _, err = read(client, buf, 5*time.Second)
		if err != nil || string(buf[:n]) != "pong" {
			t.Fatalf("pong: %q, %v", buf[:n], err)
		}
		rtt = time.Since(start)
	}
	if rtt < 30*time.Millisecond {
		t.Fatalf("round trip %v, want at least 30ms", rtt)
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	out := stdout.String()
	t.Logf("netsim output:\n%s", out)
	for _, want := range []string{"netsim: relaying", "latency=15ms", "loss=0.4", "netsim: stopped", "up:", "down:"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	m := regexp.MustCompile(`up:\s+sent=(\d+) delivered=(\d+) .*loss=(\d+)`).FindStringSubmatch(out[strings.Index(out, "netsim: stopped"):])
	if m == nil {
		t.Fatalf("no upstream counters in output")
	}
	if m[3] == "0" {
		t.Errorf("upstream loss counter is 0")
	}
}

func TestHelpDocumentsEveryFlag(t *testing.T) {
	var stdout, stderr syncBuffer
	err := run(context.Background(), []string{"-h"}, &stdout, &stderr, nil)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("run -h = %v, want flag.ErrHelp", err)
	}
	help := stderr.String()
	for _, name := range []string{"listen", "target", "seed", "max-clients", "idle", "dscp", "stats", "v",
		"latency", "jitter", "loss", "dup", "reorder", "bandwidth", "queue", "mtu",
		"up-latency", "up-loss", "down-latency", "down-loss", "down-mtu"} {
		if !strings.Contains(help, "\n  -"+name+" ") && !strings.Contains(help, "\n  -"+name+"\t") {
			t.Errorf("-h does not document -%s", name)
		}
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-loss", "1.5"},
		{"-target", "nowhere"},
		{"-up-jitter", "-1s"},
		{"-listen", "127.0.0.1:0", "extra"},
	} {
		var stdout, stderr syncBuffer
		if err := run(context.Background(), append([]string{"-listen", "127.0.0.1:0"}, args...), &stdout, &stderr, nil); err == nil {
			t.Errorf("run %q succeeded", args)
		}
	}
}

// TestSignalPrintsCounters builds the program, runs it, sends it SIGINT or
// SIGTERM, and checks that it exits cleanly after printing its counters.
func TestSignalPrintsCounters(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped in -short mode")
	}
	bin := filepath.Join(t.TempDir(), "netsim")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) { testSignal(t, bin, sig) })
	}
}

func testSignal(t *testing.T, bin string, sig os.Signal) {
	server := listenUDP(t)
	cmd := exec.Command(bin, "-listen", "127.0.0.1:0", "-target", server.LocalAddr().String(), "-loss", "0.5")
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	// The banner's first line says where it listens; the rest of the output
	// is collected until the process exits.
	lines := make(chan string, 1)
	var rest bytes.Buffer
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		sc := bufio.NewScanner(pipe)
		if sc.Scan() {
			lines <- sc.Text()
		}
		for sc.Scan() {
			rest.WriteString(sc.Text() + "\n")
		}
	}()
	var relayAddr netip.AddrPort
	select {
	case line := <-lines:
		m := regexp.MustCompile(`relaying (\S+) ->`).FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("unexpected banner %q", line)
		}
		relayAddr = netip.MustParseAddrPort(m[1])
	case <-time.After(10 * time.Second):
		t.Fatal("no banner within 10s")
	}
	client := listenUDP(t)
	for range 100 {
		client.WriteTo([]byte("x"), relayAddr)
	}
	// Let some datagrams through before stopping it.
	if _, _, err := read(server, make([]byte, 8), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	cmd.Process.Signal(sig)
	<-copied
	out := rest.String()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("netsim exited with %v; output:\n%s", err, out)
	}
	if !strings.Contains(out, "netsim: stopped") || !regexp.MustCompile(`up:\s+sent=\d+`).MatchString(out) {
		t.Fatalf("no counters after %v; output:\n%s", sig, out)
	}
}
