package raknet

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"
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
// capture's data datagrams whose first byte is one of ids.
//
// The reliability package's frame decoder did not exist when these tests
// were written, so this walks the frame layout by hand (NOTES.md, "Frame"):
// a 4-byte datagram header, then per frame a flags byte, a u16 BE length in
// bits, a u24 reliable index for reliable kinds, a u24 sequencing index for
// sequenced kinds, a u24 ordering index and u8 channel for ordered and
// sequenced kinds, and 10 bytes of split fields when split.
func captureOnline(tb testing.TB, ids ...byte) [][]byte {
	tb.Helper()
	want := map[byte]bool{}
	for _, id := range ids {
		want[id] = true
	}
	var out [][]byte
	for i, d := range loadCapture(tb) {
		b := d.bytes
		if len(b) == 0 || b[0]&0x80 == 0 || b[0]&0x40 != 0 || b[0]&0x20 != 0 {
			continue // offline, ACK or NAK
		}
		off := 4
		for off < len(b) {
			if off+3 > len(b) {
				tb.Fatalf("datagram %d: truncated frame header", i)
			}
			flags := b[off]
			n := (int(binary.BigEndian.Uint16(b[off+1:])) + 7) / 8
			off += 3
			switch kind := flags >> 5; kind {
			case 2, 6:
				off += 3
			case 3, 7:
				off += 3 + 4
			case 4:
				off += 3 + 3 + 4
			case 1:
				off += 3 + 4
			}
			split := flags&0x10 != 0
			if split {
				off += 10
			}
			if off+n > len(b) {
				tb.Fatalf("datagram %d: truncated frame", i)
			}
			payload := b[off : off+n]
			off += n
			if !split && n > 0 && want[payload[0]] {
				out = append(out, payload)
			}
		}
	}
	return out
}
