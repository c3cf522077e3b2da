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
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if n := strings.Count(text, "sent 120 payloads of 100 B"); n != 4 {
		t.Errorf("%d client lines with 120 payloads sent, want 4", n)
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
	if !strings.Contains(out.String(), "usage: go run ./examples/demo") || !strings.Contains(out.String(), "-rak-loss") {
		t.Errorf("-h printed:\n%s", out.String())
	}
	for _, args := range [][]string{{"-nosuchflag"}, {"-loss", "2"}, {"-clients", "0"}, {"-size", "8"}, {"extra"}} {
		out.Reset()
		if err := run(context.Background(), args, &out); !errors.Is(err, errUsage) {
			t.Errorf("%q: %v, want errUsage", args, err)
		}
	}
}
