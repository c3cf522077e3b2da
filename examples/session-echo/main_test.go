package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/netrak/netrak/internal/rakwire"
	"github.com/netrak/netrak/netcode"
	"github.com/netrak/netrak/reliability"
	"github.com/netrak/netrak/session"
	"github.com/netrak/netrak/transport"
	"github.com/netrak/netrak/transport/relay"
)

// server is server mode running in-process.
type server struct {
	addr  string
	lines chan string // stdout after the first line; closed when run returns
	code  chan int
	stop  context.CancelFunc // interrupts it, as Ctrl-C does
}

func startServer(t *testing.T, args ...string) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	s := &server{lines: make(chan string, 256), code: make(chan int, 1), stop: cancel}
	go func() {
		s.code <- run(ctx, append([]string{"-listen", "127.0.0.1:0"}, args...), pw, io.Discard)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	if !sc.Scan() {
		cancel()
		t.Fatalf("server printed nothing; exit %d", <-s.code)
	}
	addr, ok := strings.CutPrefix(sc.Text(), "listening on ")
	if !ok {
		cancel()
		t.Fatalf("server said %q", sc.Text())
	}
	s.addr = addr
	go func() {
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	t.Cleanup(cancel)
	return s
}

// next returns the server's next line, failing the test if none comes
// within a generous bound.
func (s *server) next(t *testing.T) string {
	t.Helper()
	select {
	case l, ok := <-s.lines:
		if !ok {
			t.Fatal("server output ended")
		}
		return l
	case <-time.After(20 * time.Second):
		t.Fatal("no line from the server in 20 s")
	}
	return ""
}

// finish interrupts the server and returns the rest of its output and its
// exit code.
func (s *server) finish() ([]string, int) {
	s.stop()
	var rest []string
	for l := range s.lines {
		rest = append(rest, l)
	}
	return rest, <-s.code
}

// runClient runs client mode and returns its exit code and stdout lines.
func runClient(t *testing.T, args ...string) (int, []string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, &out, &errOut)
	if errOut.Len() > 0 {
		t.Log(strings.TrimSpace(errOut.String()))
	}
	return code, strings.Split(strings.TrimSpace(out.String()), "\n")
}

// checkPassed checks a client run whose every reliable echo should check
// out.
func checkPassed(t *testing.T, count, code int, lines []string) {
	t.Helper()
	want := fmt.Sprintf("%d passed, 0 failed", reliableCount(count))
	if code != 0 || len(lines) != 3 || lines[len(lines)-1] != want ||
		!strings.HasPrefix(lines[0], "connected to ") || !strings.HasPrefix(lines[1], "unreliable: ") {
		t.Fatalf("exit %d, output:\n%s\nwant exit 0 ending with %q", code, strings.Join(lines, "\n"), want)
	}
	if !strings.Contains(lines[1], "never backwards") {
		t.Errorf("unreliable line %q", lines[1])
	}
}

func TestClientAgainstServer(t *testing.T) {
	s := startServer(t)
	code, lines := runClient(t, "-connect", s.addr, "-count", "200")
	checkPassed(t, 200, code, lines)
	if l := s.next(t); !strings.HasPrefix(l, "client connected: slot 0, client id 0x") {
		t.Errorf("server line %q", l)
	}
	// The client's Close is graceful and says goodbye.
	if l := s.next(t); !strings.HasPrefix(l, "client disconnected: slot 0, client id 0x") || !strings.HasSuffix(l, ", reason client disconnected") {
		t.Errorf("server line %q", l)
	}
	rest, exit := s.finish()
	var echoed int
	if exit != 0 || len(rest) != 1 || !scan(rest[0], "stopped: %d messages echoed", &echoed) || echoed < reliableCount(200) || echoed > 200 {
		t.Fatalf("server exit %d, output after the client left: %q", exit, rest)
	}
}

func scan(s, format string, a ...any) bool {
	n, err := fmt.Sscanf(s, format, a...)
	return err == nil && n == len(a)
}

func TestClientsAtOnce(t *testing.T) {
	const clients = 3
	s := startServer(t, "-max-clients", "4")
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			code, lines := runClient(t, "-connect", s.addr, "-count", "120")
			if want := fmt.Sprintf("%d passed, 0 failed", reliableCount(120)); code != 0 || lines[len(lines)-1] != want {
				t.Errorf("exit %d, output:\n%s", code, strings.Join(lines, "\n"))
			}
		})
	}
	wg.Wait()
	connects, disconnects := 0, 0
	for connects+disconnects < 2*clients {
		switch l := s.next(t); {
		case strings.HasPrefix(l, "client connected: "):
			connects++
		case strings.HasPrefix(l, "client disconnected: ") && strings.HasSuffix(l, "reason client disconnected"):
			disconnects++
		default:
			t.Fatalf("server line %q", l)
		}
	}
	if connects != clients {
		t.Errorf("%d connects, want %d", connects, clients)
	}
}

// Through an impairment relay with 5% loss each way, the reliability
// layer resends what the link lost and every reliable echo still checks
// out. The token names the relay; -internal names the server, which
// checks its own address in the token.
func TestThroughLossyRelay(t *testing.T) {
	s := startServer(t)
	link := transport.Impairment{Loss: 0.05, Latency: 5 * time.Millisecond, Jitter: 2 * time.Millisecond}
	r, err := relay.New(relay.Config{Listen: "127.0.0.1:0", Target: netip.MustParseAddrPort(s.addr), Up: link, Down: link, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	relayDone := make(chan error, 1)
	go func() { relayDone <- r.Run(ctx) }()

	code, lines := runClient(t, "-connect", r.Addr().String(), "-internal", s.addr, "-count", "160")
	cancel()
	if err := <-relayDone; err != nil {
		t.Errorf("relay: %v", err)
	}
	checkPassed(t, 160, code, lines)
	st := r.Stats()
	if st.Up.DroppedLoss == 0 || st.Down.DroppedLoss == 0 {
		t.Errorf("the relay lost nothing (up %d, down %d): the test did not exercise loss", st.Up.DroppedLoss, st.Down.DroppedLoss)
	}
}

// Without -internal, a token naming the relay does not name the server,
// which refuses it; the client gives up when -timeout passes.
func TestRelayWithoutInternalFails(t *testing.T) {
	s := startServer(t)
	r, err := relay.New(relay.Config{Listen: "127.0.0.1:0", Target: netip.MustParseAddrPort(s.addr)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go r.Run(ctx)
	code, lines := runClient(t, "-connect", r.Addr().String(), "-count", "8", "-timeout", "500ms")
	if want := fmt.Sprintf("0 passed, %d failed", reliableCount(8)); code != 1 || len(lines) != 1 || lines[0] != want {
		t.Fatalf("exit %d, output %q, want exit 1 and %q", code, lines, want)
	}
}

func TestServerFull(t *testing.T) {
	s := startServer(t, "-max-clients", "1")
	// A client of the test's own holds the only slot.
	token, err := mintToken(netip.MustParseAddrPort(s.addr), netip.MustParseAddrPort(s.addr))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	holder, err := session.Dial(ctx, token, session.ClientConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if l := s.next(t); !strings.HasPrefix(l, "client connected: slot 0") {
		t.Fatalf("server line %q", l)
	}
	code, lines := runClient(t, "-connect", s.addr, "-count", "10")
	if want := fmt.Sprintf("0 passed, %d failed", reliableCount(10)); code != 1 || len(lines) != 1 || lines[0] != want {
		t.Fatalf("exit %d, output %q, want exit 1 and %q", code, lines, want)
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
	code, lines := runClient(t, "-connect", pc.LocalAddr().String(), "-count", "4", "-timeout", "300ms")
	if want := fmt.Sprintf("0 passed, %d failed", reliableCount(4)); code != 1 || len(lines) != 1 || lines[0] != want {
		t.Fatalf("exit %d, output %q, want exit 1 and %q", code, lines, want)
	}
	// The token's own timeout is 5 s; -timeout must end the run first.
	if d := time.Since(start); d > 4*time.Second {
		t.Fatalf("took %v to give up", d)
	}
}

// A server that corrupts one message and swaps two on one ordered channel
// fails exactly those three.
func TestClientDetectsBadEchoes(t *testing.T) {
	const corrupt, first, second = 4, 2, 10 // 2 and 10 are both reliable-ordered on channel 1
	if kindOf(first) != kindOf(second) || kindOf(first).rel != reliability.ReliableOrdered {
		t.Fatal("the plan changed; pick other messages")
	}
	l, err := session.ListenUDP("udp4", "127.0.0.1:0", session.ServerConfig{
		Netcode: netcode.ServerConfig{ProtocolID: demoProtocolID, PrivateKey: demoKey},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.AcceptConn(context.Background())
		if err != nil {
			return
		}
		defer c.Close()
		var held []byte
		for {
			m, err := c.ReadMessage()
			if err != nil {
				return
			}
			if len(m.Data) >= 4 {
				switch binary.LittleEndian.Uint32(m.Data) {
				case corrupt:
					m.Data[len(m.Data)-1] ^= 0x80
				case first:
					held = m.Data
					continue
				case second:
					c.WriteMessage(m.Data, m.Reliability, m.Channel, reliability.Medium)
					m.Data = held
				}
			}
			c.WriteMessage(m.Data, m.Reliability, m.Channel, reliability.Medium)
		}
	}()
	code, lines := runClient(t, "-connect", l.Addr().String(), "-count", "16", "-timeout", "20s")
	if want := fmt.Sprintf("%d passed, 3 failed", reliableCount(16)-3); code != 1 || lines[len(lines)-1] != want {
		t.Fatalf("exit %d, output:\n%s\nwant exit 1 ending with %q", code, strings.Join(lines, "\n"), want)
	}
}

// An interrupted server closes its clients' connections gracefully and
// reports each disconnect.
func TestServerInterrupted(t *testing.T) {
	s := startServer(t)
	token, err := mintToken(netip.MustParseAddrPort(s.addr), netip.MustParseAddrPort(s.addr))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := session.Dial(ctx, token, session.ClientConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.WriteMessage([]byte("last words"), reliability.ReliableOrdered, 7, reliability.Medium); err != nil {
		t.Fatal(err)
	}
	m, err := c.ReadMessage()
	if err != nil || string(m.Data) != "last words" || m.Reliability != reliability.ReliableOrdered || m.Channel != 7 {
		t.Fatalf("echo %q %v channel %d, err %v", m.Data, m.Reliability, m.Channel, err)
	}
	if l := s.next(t); !strings.HasPrefix(l, "client connected: slot 0") {
		t.Fatalf("server line %q", l)
	}
	rest, code := s.finish()
	if code != 0 || len(rest) != 2 || !strings.HasSuffix(rest[0], "reason closed by the server") || rest[1] != "stopped: 1 messages echoed" {
		t.Fatalf("exit %d, output after the interrupt: %q", code, rest)
	}
	if _, err := c.ReadMessage(); !errors.Is(err, io.EOF) {
		t.Errorf("client read after the server closed: %v, want io.EOF", err)
	}
}

func TestServerTimeout(t *testing.T) {
	s := startServer(t, "-timeout", "200ms")
	var rest []string
	for l := range s.lines {
		rest = append(rest, l)
	}
	if code := <-s.code; code != 0 || len(rest) != 1 || rest[0] != "stopped: 0 messages echoed" {
		t.Fatalf("exit %d, output %q", code, rest)
	}
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"-listen", "127.0.0.1:0", "-connect", "127.0.0.1:1"},
		{"-connect", "127.0.0.1:1", "-count", "0"},
		{"-connect", "127.0.0.1:1", "-timeout", "0"},
		{"-connect", "127.0.0.1"},
		{"-connect", "127.0.0.1:1", "-internal", "nonsense"},
		{"-listen", "127.0.0.1:0", "-max-clients", "0"},
		{"-listen", "127.0.0.1:0", "-max-clients", "5000"},
		{"-listen", "0.0.0.0:0", "-public", "nonsense"},
		{"-connect", "127.0.0.1:1", "extra"},
		{"-nosuchflag"},
	} {
		if code := run(context.Background(), args, io.Discard, io.Discard); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
	var help bytes.Buffer
	if code := run(context.Background(), []string{"-h"}, io.Discard, &help); code != 0 {
		t.Errorf("-h: exit %d, want 0", code)
	}
	for _, flag := range []string{"-listen", "-public", "-max-clients", "-connect", "-internal", "-count", "-timeout"} {
		if !strings.Contains(help.String(), "  "+flag+" ") {
			t.Errorf("-h does not document %s:\n%s", flag, help.String())
		}
	}
}

// A wildcard address without -public cannot serve: tokens name one
// address and the server must know which.
func TestServerWildcardNeedsPublic(t *testing.T) {
	var errOut bytes.Buffer
	if code := run(context.Background(), []string{"-listen", "0.0.0.0:0"}, io.Discard, &errOut); code != 1 ||
		!strings.Contains(errOut.String(), "PublicAddress") {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
}

func TestPlan(t *testing.T) {
	// The largest unreliable message that is not split and so not sent
	// reliably.
	room := session.MaxDatagram - rakwire.DataHeaderLen - rakwire.FrameHeaderLen(rakwire.UnreliableSequenced, false)
	sizes := map[kind]map[int]bool{}
	for i := range len(plan) * len(reliableSizes) * len(unreliableSizes) {
		k, m := kindOf(i), message(i)
		if sizes[k] == nil {
			sizes[k] = map[int]bool{}
		}
		sizes[k][len(m)] = true
		if !k.rel.IsReliable() && (len(m) > room || len(m) < 4) {
			t.Errorf("unreliable message %d has %d bytes, want 4..%d", i, len(m), room)
		}
		if len(m) >= 4 && binary.LittleEndian.Uint32(m) != uint32(i) {
			t.Errorf("message %d starts % x", i, m[:4])
		}
	}
	for k, s := range sizes {
		want := len(unreliableSizes)
		if k.rel.IsReliable() {
			want = len(reliableSizes)
		}
		if len(s) != want {
			t.Errorf("%v on channel %d meets %d sizes, want %d", k.rel, k.channel, len(s), want)
		}
	}
	if got := reliableCount(len(plan)); got != 6 {
		t.Errorf("%d reliable kinds in the plan, want 6", got)
	}
}

// The checker's verdicts, fed by hand.
func TestChecker(t *testing.T) {
	echo := func(i int) session.Message {
		k := kindOf(i)
		return session.Message{Data: message(i), Reliability: k.rel, Channel: k.channel}
	}
	const n = 24
	all := func() []session.Message {
		var ms []session.Message
		for i := range n {
			ms = append(ms, echo(i))
		}
		return ms
	}
	for _, tc := range []struct {
		name   string
		echoes func() []session.Message
		passed int
		failed int // as the summary line counts them
		back   int // unreliable echoes accounted
		bad    int // backwards plus malformed
	}{
		{"all", all, 18, 0, 6, 0},
		{"ordered swapped", func() []session.Message {
			ms := all()
			ms[0], ms[8] = ms[8], ms[0] // channel 0's first two
			return ms
		}, 16, 2, 6, 0},
		{"reliable in any order", func() []session.Message {
			ms := all()
			ms[1], ms[7] = ms[7], ms[1]
			return ms
		}, 18, 0, 6, 0},
		{"corrupt", func() []session.Message {
			ms := all()
			ms[9].Data[3] ^= 1 // reliable, 20000 bytes
			return ms
		}, 17, 2, 6, 0},
		{"duplicate reliable", func() []session.Message { return append(all(), echo(7)) }, 18, 1, 6, 0},
		{"wrong channel", func() []session.Message {
			ms := all()
			ms[22].Channel = 0 // channel 0 has had all its echoes by then
			return ms
		}, 17, 2, 6, 0},
		{"sequenced backwards", func() []session.Message {
			ms := all()
			ms[3], ms[11] = ms[11], ms[3]
			return ms
		}, 18, 0, 6, 1},
		{"unreliable unknown", func() []session.Message {
			ms := all()
			ms[5].Data[0] ^= 0xff
			return ms
		}, 18, 0, 5, 1},
		{"unreliable lost", func() []session.Message {
			ms := all()
			return append(ms[:21], ms[22:]...)
		}, 18, 0, 5, 0},
	} {
		ck := newChecker(n, io.Discard)
		for _, m := range tc.echoes() {
			ck.check(m)
		}
		failed := ck.reliable - ck.passed + ck.unexpected
		if ck.passed != tc.passed || failed != tc.failed || ck.unreliableBack != tc.back || ck.backwards+ck.malformed != tc.bad {
			t.Errorf("%s: passed %d, failed %d, unreliable back %d, bad %d; want %d, %d, %d, %d",
				tc.name, ck.passed, failed, ck.unreliableBack, ck.backwards+ck.malformed, tc.passed, tc.failed, tc.back, tc.bad)
		}
	}
}
