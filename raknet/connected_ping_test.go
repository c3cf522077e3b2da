package raknet

import (
	"testing"
)

func TestCaptureConnectedPingPong(t *testing.T) {
	pings := captureOnline(t, IDConnectedPing)
	if len(pings) < 2 {
		t.Fatalf("found %d connected pings, want at least 2", len(pings))
	}
	for _, b := range pings {
		p, err := ParseConnectedPing(b)
		if err != nil {
			t.Fatal(err)
		}
		checkBytes(t, p.Append(nil), b, p.Len())
	}
	pongs := captureOnline(t, IDConnectedPong)
	if len(pongs) < 2 {
		t.Fatalf("found %d connected pongs, want at least 2", len(pongs))
	}
	// The server's pong answers the client's ping sent with the new
	// incoming connection (time 0x1f) at server time 0x236.
	p, err := ParseConnectedPong(pongs[0])
	if err != nil {
		t.Fatal(err)
	}
	if want := (ConnectedPong{PingTime: 0x1f, PongTime: 0x236}); p != want {
		t.Fatalf("first connected pong %+v, want %+v", p, want)
	}
	for _, b := range pongs {
		p, err := ParseConnectedPong(b)
		if err != nil {
			t.Fatal(err)
		}
		checkBytes(t, p.Append(nil), b, p.Len())
	}
}
