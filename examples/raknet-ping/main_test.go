package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/netrak/netrak/raknet"
)

// responder answers RakNet pings on a loopback UDP socket with AnswerPing.
func responder(t *testing.T, r *raknet.PongResponse) string {
	t.Helper()
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		buf := make([]byte, 2048)
		for {
			n, from, err := conn.ReadFromUDPAddrPort(buf)
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if out, err := raknet.AnswerPing(nil, buf[:n], r); err == nil {
				conn.WriteToUDPAddrPort(out, from)
			}
		}
	}()
	t.Cleanup(func() {
		conn.Close()
		wg.Wait()
	})
	return conn.LocalAddr().String()
}

func TestPingBedrockServer(t *testing.T) {
	motd := "MCPE;Test Server;594;1.20.80;3;20;12345;Sub;Survival;1;19132;19133;"
	addr := responder(t, &raknet.PongResponse{ServerGUID: 0xbeef, Data: []byte(motd)})
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-timeout", "5s", addr}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"server GUID: 48879 (0x000000000000beef)",
		"RTT:",
		"(67 bytes, prefixed)",
		"MOTD:        Test Server",
		"players:     3/20",
		"version:     1.20.80 (protocol 594)",
		"ports:       IPv4 19132, IPv6 19133",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestPingRawServer(t *testing.T) {
	addr := responder(t, &raknet.PongResponse{ServerGUID: 1, Data: []byte("RakNet C++ reference echo server"), Encoding: raknet.PongRaw})
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{addr}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	out := stdout.String()
	if !strings.Contains(out, `"RakNet C++ reference echo server" (32 bytes, raw)`) || strings.Contains(out, "Bedrock MOTD") {
		t.Errorf("unexpected output:\n%s", out)
	}
}

func TestPingTimeout(t *testing.T) {
	// A bound socket that never answers.
	silent, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-timeout", "300ms", "-interval", "100ms", silent.LocalAddr().String()}, &stdout, &stderr)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if !strings.Contains(stderr.String(), "no pong") {
		t.Errorf("stderr %q", stderr.String())
	}
}

func TestUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), nil, &stdout, &stderr); code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
}
