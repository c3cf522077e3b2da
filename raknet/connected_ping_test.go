package raknet

import "testing"

func TestCaptureConnectedPingPong(t *testing.T) {
	pings := captureOnline(t, IDConnectedPing)
	if len(pings) < 2 {
		t.Fatalf("found %d connected pings, want at least 2", len(pings))
	}
	for _, b := range pings {
		var p ConnectedPing
		n, err := ParseConnectedPing(b, &p)
		checkUsed(t, n, err, len(b))
		checkEncoding(t, &p, b)
	}
	pongs := captureOnline(t, IDConnectedPong)
	if len(pongs) < 2 {
		t.Fatalf("found %d connected pongs, want at least 2", len(pongs))
	}
	// The server's pong answers the client's ping sent with the new
	// incoming connection (time 0x1f) at server time 0x236.
	var p ConnectedPong
	if _, err := ParseConnectedPong(pongs[0], &p); err != nil {
		t.Fatal(err)
	}
	if want := (ConnectedPong{PingTime: 0x1f, PongTime: 0x236}); p != want {
		t.Fatalf("first connected pong %+v, want %+v", p, want)
	}
	for _, b := range pongs {
		var p ConnectedPong
		n, err := ParseConnectedPong(b, &p)
		checkUsed(t, n, err, len(b))
		checkEncoding(t, &p, b)
	}
}
