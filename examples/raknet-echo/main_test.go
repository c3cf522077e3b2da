package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	goraknet "github.com/sandertv/go-raknet"
)

// startServer runs server mode on a loopback port and returns its address.
func startServer(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"-listen", "127.0.0.1:0"}, args...), pw, io.Discard)
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		go io.Copy(io.Discard, pr)
		if code := <-done; code != 0 {
			t.Errorf("server exited %d", code)
		}
	})
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if !ok {
		t.Fatalf("server said %q", line)
	}
	go io.Copy(io.Discard, pr)
	return addr
}

func runClient(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, &out, &errOut)
	if errOut.Len() > 0 {
		t.Log(errOut.String())
	}
	return code, out.String()
}

func TestClientAgainstServer(t *testing.T) {
	addr := startServer(t, "-pong", "echo test")
	for _, protocol := range []string{"11", "6", "10"} {
		code, out := runClient(t, "-connect", addr, "-count", "200", "-protocol", protocol, "-timeout", "30s")
		if code != 0 || out != "200 passed, 0 failed\n" {
			t.Fatalf("protocol %s: exit %d, output %q", protocol, code, out)
		}
	}
}

func TestServerRefusesProtocolNotListed(t *testing.T) {
	addr := startServer(t, "-protocols", "11")
	code, out := runClient(t, "-connect", addr, "-count", "3", "-protocol", "6", "-timeout", "10s")
	if code != 1 || out != "0 passed, 3 failed\n" {
		t.Fatalf("exit %d, output %q", code, out)
	}
}

func TestClientAgainstGoRaknetServer(t *testing.T) {
	var logged bytes.Buffer
	var logMu sync.Mutex
	l, err := goraknet.ListenConfig{ErrorLog: slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logged}, nil))}.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				gc := c.(*goraknet.Conn)
				for {
					pk, err := gc.ReadPacket()
					if err != nil {
						return
					}
					gc.Write(pk)
				}
			}()
		}
	}()
	code, out := runClient(t, "-connect", l.Addr().String(), "-count", "200", "-timeout", "30s")
	if code != 0 || out != "200 passed, 0 failed\n" {
		logMu.Lock()
		defer logMu.Unlock()
		t.Fatalf("exit %d, output %q; go-raknet logged:\n%s", code, out, logged.String())
	}
}

func TestClientTimeout(t *testing.T) {
	// A socket that never answers.
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	start := time.Now()
	code, out := runClient(t, "-connect", pc.LocalAddr().String(), "-count", "4", "-timeout", "300ms")
	if code != 1 || out != "0 passed, 4 failed\n" {
		t.Fatalf("exit %d, output %q", code, out)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v to give up", d)
	}
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"-listen", "x", "-connect", "y"},
		{"-connect", "127.0.0.1:1", "-protocol", "0"},
		{"-listen", "127.0.0.1:0", "-protocols", "6,x"},
		{"-connect", "127.0.0.1:1", "extra"},
	} {
		if code := run(context.Background(), args, io.Discard, io.Discard); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
