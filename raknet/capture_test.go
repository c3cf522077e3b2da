package raknet

import (
	"errors"
	"io"
	"testing"

	"github.com/netrak/netrak/internal/rakcapture"
	"github.com/netrak/netrak/reliability"
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
// decoded with package reliability's wire code, so these tests also check
// that the two packages agree on the original library's framing.
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
		_, frames, err := reliability.ParseDataDatagram(d.Data)
		if errors.Is(err, reliability.ErrWrongDatagramType) {
			continue // ACK or NAK
		}
		if err != nil {
			tb.Fatalf("datagram %d: %v", i, err)
		}
		for {
			var f reliability.Frame
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
