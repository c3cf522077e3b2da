package raknet

import (
	"errors"
	"io"
	"testing"

	"github.com/netrak/netrak/internal/rakcapture"
	"github.com/netrak/netrak/internal/rakwire"
)

// The original C++ library's session (package rakcapture) gives these
// tests real messages of every kind RakNet sends.

// captureOffline returns the offline messages of the capture in order.
func captureOffline(tb testing.TB) [][]byte {
	var out [][]byte
	for _, d := range rakcapture.Load(tb) {
		if IsOffline(d.Data) {
			out = append(out, d.Data)
		}
	}
	return out
}

// captureOnline returns the payloads of the unsplit frames in the
// capture's data datagrams whose first byte is one of ids. Frames are
// decoded with the reliability layer's wire code (package rakwire), so
// these tests also check that the two agree on the original library's
// framing.
func captureOnline(tb testing.TB, ids ...byte) [][]byte {
	tb.Helper()
	want := map[byte]bool{}
	for _, id := range ids {
		want[id] = true
	}
	var out [][]byte
	for i, d := range rakcapture.Load(tb) {
		if IsOffline(d.Data) {
			continue
		}
		var h rakwire.DataHeader
		n, err := rakwire.ParseDataHeader(d.Data, &h)
		if errors.Is(err, rakwire.ErrWrongDatagramType) {
			continue // ACK or NAK
		}
		if err != nil {
			tb.Fatalf("datagram %d: %v", i, err)
		}
		frames := rakwire.NewFrameReader(d.Data[n:])
		for {
			var f rakwire.Frame
			err := frames.Next(&f)
			if err == io.EOF {
				break
			}
			if err != nil {
				tb.Fatalf("datagram %d: %v", i, err)
			}
			if !f.Split && len(f.Payload) > 0 && want[f.Payload[0]] {
				out = append(out, f.Payload)
			}
		}
	}
	return out
}
