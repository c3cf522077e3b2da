package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"strings"
	"testing"
	"time"
)

// TestDemo runs the demo as `go run ./examples/demo` does and checks that
// it succeeds and reports each part.
func TestDemo(t *testing.T) {
	var out bytes.Buffer
	start := time.Now()
	err := run(context.Background(), nil, &out)
	t.Logf("took %v, output:\n%s", time.Since(start).Round(time.Millisecond), out.String())
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	text := out.String()
	for _, want := range []string{
		"== Part 1: netcode 1.02, 4 clients",
		"backend: tokens list public address ",
		"server: 4 connects, 4 disconnects (client disconnected: 4)",
		"relay client->server: ",
		"part 1: ok",
		"== Part 2: RakNet, 300 reliable-ordered messages",
		"300 echoes arrived complete, exactly once and in order (",
		"larger than the MTU, so sent split",
		"server: 301 messages echoed",
		"part 2: ok",
		"== Part 3: session (netcode carrying RakNet reliability), 4 clients",
		"each client, for 2s: 200 events reliable-ordered on channel 0, and 120 position updates at 60 Hz",
		"server: 4 connects, 4 disconnects (client disconnected: 4)",
		"part 3: ok",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if n := strings.Count(text, "sent 120 payloads of 100 B"); n != 4 {
		t.Errorf("%d client lines with 120 payloads sent, want 4", n)
	}
	part3 := text[strings.Index(text, "== Part 3"):]
	if n := strings.Count(part3, "200 events echoed complete and in order; positions: 120 sent, "); n != 4 {
		t.Errorf("%d session clients with every event back and 120 positions sent, want 4", n)
	}
	if n := strings.Count(part3, "), never backwards\n"); n != 4 {
		t.Errorf("%d session clients whose positions never went backwards, want 4", n)
	}
	if n := strings.Count(part3, " frames resent; 320 messages sent, "); n != 4 {
		t.Errorf("%d session clients with statistics, want 4", n)
	}
	if !strings.Contains(part3, "relay client->server: ") || strings.Contains(part3, "dropped 0 (loss)") {
		t.Errorf("part 3's relay lost nothing, or is not reported")
	}
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "demo: ok") {
		t.Errorf("last line %q, want demo: ok", last)
	}
}

// TestDemoDeadLink checks that the demo reports failure when nothing gets
// through: the clients' dials give up when the part's time runs out.
func TestDemoDeadLink(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"-loss", "1", "-clients", "2", "-timeout", "500ms"}, &out)
	if err == nil {
		t.Fatalf("demo over a dead link succeeded:\n%s", out.String())
	}
	if !strings.Contains(err.Error(), "part 1") || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %q, want part 1 failing with the deadline", err)
	}
	if strings.Contains(out.String(), "demo: ok") {
		t.Errorf("output claims success:\n%s", out.String())
	}
}

// TestDemoSessionDeadLink checks that part 3 fails when nothing gets
// through, and that -parts runs it alone.
func TestDemoSessionDeadLink(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"-parts", "3", "-sess-loss", "1", "-sess-clients", "2", "-timeout", "500ms"}, &out)
	if err == nil {
		t.Fatalf("demo over a dead link succeeded:\n%s", out.String())
	}
	if !strings.Contains(err.Error(), "part 3 (session)") || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %q, want part 3 failing with the deadline", err)
	}
	if text := out.String(); strings.Contains(text, "== Part 1") || strings.Contains(text, "== Part 2") || strings.Contains(text, "demo: ok") {
		t.Errorf("output:\n%s", text)
	}
}

// TestDemoSessionPartAlone runs part 3 with other numbers than the
// defaults, which the checks must follow.
func TestDemoSessionPartAlone(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"-parts", "3", "-sess-clients", "2", "-sess-messages", "30", "-sess-rate", "50", "-sess-duration", "400ms"}, &out)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	text := out.String()
	if n := strings.Count(text, "30 events echoed complete and in order; positions: 20 sent, "); n != 2 {
		t.Errorf("%d clients with 30 events back and 20 positions sent, want 2:\n%s", n, text)
	}
	if !strings.Contains(text, "server: 2 connects, 2 disconnects (client disconnected: 2)") || strings.Contains(text, "== Part 1") {
		t.Errorf("output:\n%s", text)
	}
}

func TestDemoStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	if err := run(ctx, nil, &out); !errors.Is(err, context.Canceled) {
		t.Fatalf("run with a cancelled context: %v, want context.Canceled", err)
	}
}

func TestFlags(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-h"}, &out); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v, want flag.ErrHelp", err)
	}
	if !strings.Contains(out.String(), "usage: go run ./examples/demo") || !strings.Contains(out.String(), "-rak-loss") ||
		!strings.Contains(out.String(), "-sess-loss") || !strings.Contains(out.String(), "-parts") {
		t.Errorf("-h printed:\n%s", out.String())
	}
	for _, args := range [][]string{{"-nosuchflag"}, {"-loss", "2"}, {"-clients", "0"}, {"-size", "8"}, {"extra"},
		{"-parts", "4"}, {"-parts", "1,x"}, {"-sess-clients", "0"}, {"-sess-rate", "0"}, {"-sess-loss", "-1"}} {
		out.Reset()
		if err := run(context.Background(), args, &out); !errors.Is(err, errUsage) {
			t.Errorf("%q: %v, want errUsage", args, err)
		}
	}
}
