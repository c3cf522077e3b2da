package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netrak/netrak/netcode"
	"github.com/netrak/netrak/transport"
)

// binDir holds the two commands, built once for the tests that run them
// against each other.
var binDir string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "netcode-examples")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, name := range []string{"netcode-server", "netcode-client"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, name), "../"+name)
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n%s", name, err, out)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// startServerBinary runs the server command and returns its address and a
// function that waits for it and returns its output lines and exit code.
func startServerBinary(t *testing.T, args ...string) (string, func() ([]string, int)) {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "netcode-server"), append([]string{"-addr", "127.0.0.1:0"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() {
		t.Fatal("server printed nothing")
	}
	addr := strings.TrimPrefix(sc.Text(), "listening on ")
	return addr, func() ([]string, int) {
		var lines []string
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		cmd.Wait()
		return lines, cmd.ProcessState.ExitCode()
	}
}

func runClientBinary(t *testing.T, args ...string) ([]string, int) {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "netcode-client"), args...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Run()
	return strings.Split(strings.TrimSpace(out.String()), "\n"), cmd.ProcessState.ExitCode()
}

func TestBinariesAgainstEachOther(t *testing.T) {
	addr, wait := startServerBinary(t, "-count", "30")
	clientOut, clientCode := runClientBinary(t, "-addr", addr, "-count", "30")
	serverOut, serverCode := wait()
	t.Logf("client:\n%s\nserver:\n%s", strings.Join(clientOut, "\n"), strings.Join(serverOut, "\n"))
	if clientCode != 0 || serverCode != 0 {
		t.Fatalf("exit codes: client %d, server %d", clientCode, serverCode)
	}
	wantClient := []string{"connected to " + addr + ": slot 0 of 256", "disconnected: client disconnected", "30 passed, 0 failed"}
	if strings.Join(clientOut, "\n") != strings.Join(wantClient, "\n") {
		t.Errorf("client output:\n%s\nwant:\n%s", strings.Join(clientOut, "\n"), strings.Join(wantClient, "\n"))
	}
	if len(serverOut) != 3 ||
		!strings.HasPrefix(serverOut[0], "client connected: slot 0, client id ") ||
		!strings.HasPrefix(serverOut[1], "client disconnected: slot 0, ") || !strings.HasSuffix(serverOut[1], "reason client disconnected") ||
		!strings.HasSuffix(serverOut[2], " passed, 0 failed") {
		t.Errorf("server output:\n%s", strings.Join(serverOut, "\n"))
	}
	var passed int
	fmt.Sscanf(serverOut[len(serverOut)-1], "%d passed", &passed)
	if passed < 30 {
		t.Errorf("server counted %d payloads, want at least 30", passed)
	}
}

func TestBinaryTokenFile(t *testing.T) {
	addr, wait := startServerBinary(t, "-count", "10")
	server := netip.MustParseAddrPort(addr)
	key, _ := netcode.ParseKeyHex(testKeyHex)
	tok, err := netcode.GenerateConnectToken(&netcode.TokenParams{ClientID: 5, PublicAddresses: []netip.AddrPort{server},
		ProtocolID: 0x1122334455667788, PrivateKey: key})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, tok, 0o600); err != nil {
		t.Fatal(err)
	}
	// -addr and -key are not needed with a token; a wrong key proves it.
	out, code := runClientBinary(t, "-token", file, "-key", strings.Repeat("00", 32), "-count", "10")
	if code != 0 || out[len(out)-1] != "10 passed, 0 failed" {
		t.Fatalf("client exit %d:\n%s", code, strings.Join(out, "\n"))
	}
	if serverOut, code := wait(); code != 0 {
		t.Fatalf("server exit %d:\n%s", code, strings.Join(serverOut, "\n"))
	}
}

// server runs an in-process netcode server for the client's run.
func server(t *testing.T, maxClients int) *netcode.ServerConn {
	t.Helper()
	key, _ := netcode.ParseKeyHex(testKeyHex)
	conn, err := transport.ListenUDP("udp4", "127.0.0.1:0", transport.UDPConfig{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := netcode.ListenServer(conn, netcode.ServerConfig{ProtocolID: 0x1122334455667788, PrivateKey: key, MaxClients: maxClients})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func runClient(args ...string) ([]string, error) {
	return runClientContext(context.Background(), args...)
}

func runClientContext(ctx context.Context, args ...string) ([]string, error) {
	var out bytes.Buffer
	err := run(ctx, args, &out, io.Discard)
	return strings.Split(strings.TrimSpace(out.String()), "\n"), err
}

func TestClientDenied(t *testing.T) {
	s := server(t, 1)
	// The first client holds the only slot until the test interrupts it,
	// however long the second one takes to be denied.
	interrupt, stop := context.WithCancel(context.Background())
	defer stop()
	first := make(chan error, 1)
	go func() {
		_, err := runClientContext(interrupt, "-addr", s.LocalAddr().String(), "-timeout", "0")
		first <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The server's connect event comes before the client has its
	// keep-alive; a payload proves the client itself is connected, so that
	// interrupting it later ends a connection, not a Dial.
	if _, err := s.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	out, err := runClient("-addr", s.LocalAddr().String(), "-count", "1")
	if !errors.Is(err, netcode.ErrConnectionDenied) || len(out) != 2 || out[0] != "connection failed: "+netcode.ErrConnectionDenied.Error() {
		t.Fatalf("second client: %v\n%s", err, strings.Join(out, "\n"))
	}
	stop()
	if err := <-first; err != nil {
		t.Fatalf("first client: %v", err)
	}
}

func TestClientServerDisconnects(t *testing.T) {
	s := server(t, 4)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if m, err := s.Receive(ctx); err == nil { // the client is connected and sending
			s.Disconnect(m.ClientIndex)
		}
	}()
	out, err := runClient("-addr", s.LocalAddr().String(), "-count", "100", "-timeout", "10s")
	if !errors.Is(err, netcode.ErrDisconnected) || out[len(out)-2] != "disconnected: server disconnected" {
		t.Fatalf("run = %v\n%s", err, strings.Join(out, "\n"))
	}
}

func TestClientCountsMismatches(t *testing.T) {
	s := server(t, 4)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		e, err := s.NextEvent(ctx)
		if err != nil {
			return
		}
		bad := append([]byte(nil), demoPayload...)
		bad[0] = 9
		for _, p := range [][]byte{demoPayload, bad, demoPayload[:5], demoPayload, demoPayload} {
			s.Send(e.ClientIndex, p)
		}
	}()
	out, err := runClient("-addr", s.LocalAddr().String(), "-count", "3", "-timeout", "10s")
	if err == nil || out[len(out)-1] != "3 passed, 2 failed" {
		t.Fatalf("run = %v\n%s", err, strings.Join(out, "\n"))
	}
}

func TestClientGivesUp(t *testing.T) {
	// Nobody listens: the 5 s token timeout is longer than -timeout.
	out, err := runClient("-addr", "127.0.0.1:9", "-count", "1", "-timeout", "300ms")
	if !errors.Is(err, context.DeadlineExceeded) || out[len(out)-1] != "0 passed, 0 failed" {
		t.Fatalf("run = %v\n%s", err, strings.Join(out, "\n"))
	}
}

func TestClientTimeoutWithoutCountFails(t *testing.T) {
	// Connected and counting, but -timeout ends the run: that is giving up.
	s := server(t, 4)
	out, err := runClient("-addr", s.LocalAddr().String(), "-timeout", "500ms")
	if !errors.Is(err, context.DeadlineExceeded) || out[len(out)-2] != "disconnected: client disconnected" {
		t.Fatalf("run = %v\n%s", err, strings.Join(out, "\n"))
	}
}

func TestClientFlags(t *testing.T) {
	short := filepath.Join(t.TempDir(), "short")
	os.WriteFile(short, make([]byte, 100), 0o600)
	for _, args := range [][]string{
		{"-key", "abcd"},
		{"-protocol-id", "x"},
		{"-addr", "nonsense"},
		{"-count", "-1"},
		{"-token", short},
		{"-token", filepath.Join(t.TempDir(), "missing")},
		{"extra"},
	} {
		if _, err := runClient(args...); err == nil {
			t.Errorf("run %q succeeded", args)
		}
	}
	if _, err := runClient("-h"); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v", err)
	}
}
