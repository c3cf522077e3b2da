package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

func TestDemo(t *testing.T) {
	var out bytes.Buffer
	start := time.Now()
	res, err := demo(context.Background(), &out)
	elapsed := time.Since(start)
	t.Logf("output:\n%s", out.String())
	if err != nil {
		t.Fatalf("demo: %v", err)
	}
	if elapsed > 10*time.Second {
		t.Errorf("demo took %v, want under 10s", elapsed)
	}
	up, down := res.relay.Up, res.relay.Down
	if up.Sent != pings {
		t.Errorf("relay saw %d pings, want %d", up.Sent, pings)
	}
	// Each side can only have read what the relay delivered to it (a
	// datagram delivered as the demo winds down may go unread).
	if res.serverReceived == 0 || uint64(res.serverReceived) > up.Delivered {
		t.Errorf("server received %d, relay delivered %d upstream", res.serverReceived, up.Delivered)
	}
	if uint64(res.clientReceived) > down.Delivered {
		t.Errorf("client received %d, more than the relay delivered (%d)", res.clientReceived, down.Delivered)
	}
	if up.DroppedLoss == 0 || down.DroppedLoss == 0 || up.Delayed == 0 {
		t.Errorf("impairments not applied: %v", res.relay)
	}
	// 10% loss each way leaves about 81% of pings answered.
	if frac := float64(res.uniquePongs) / pings; frac < 0.65 || frac > 0.97 {
		t.Errorf("%.2f of pings answered, want about 0.81", frac)
	}
	for _, want := range []string{"client sent 200 pings", "server received", "client received", "relay counters:", "up:   sent=200"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

func TestDemoStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	if err := run(ctx, &out); err == nil {
		t.Fatal("demo with a cancelled context succeeded")
	}
}
