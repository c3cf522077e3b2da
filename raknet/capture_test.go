package raknet

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/netrak/netrak/reliability"
)

// captured is one UDP payload of testdata/raknet_cpp_session.json, a
// loopback session between two peers built on the original C++ library.
type captured struct {
	T          float64 `json:"t"`
	From       string  `json:"from"`
	ClientPort int     `json:"client_port"`
	Hex        string  `json:"hex"`
	bytes      []byte
}

func loadCapture(tb testing.TB) []captured {
	tb.Helper()
	raw, err := os.ReadFile("testdata/raknet_cpp_session.json")
	if err != nil {
		tb.Fatal(err)
	}
	var doc struct {
		ServerPort int        `json:"server_port"`
		Datagrams  []captured `json:"datagrams"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		tb.Fatal(err)
	}
	for i := range doc.Datagrams {
		b, err := hex.DecodeString(doc.Datagrams[i].Hex)
		if err != nil {
			tb.Fatalf("datagram %d: %v", i, err)
		}
		doc.Datagrams[i].bytes = b
	}
	return doc.Datagrams
}

// captureOffline returns the offline messages of the capture in order.
func captureOffline(tb testing.TB) [][]byte {
	var out [][]byte
	for _, d := range loadCapture(tb) {
		if IsOffline(d.bytes) {
			out = append(out, d.bytes)
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
	for i, d := range loadCapture(tb) {
		if IsOffline(d.bytes) {
			continue
		}
		_, frames, err := reliability.ParseDataDatagram(d.bytes)
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
