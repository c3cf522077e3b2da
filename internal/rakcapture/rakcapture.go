// Package rakcapture holds one session between two peers built on the
// original RakNet C++ library (4.081, protocol 6), captured on loopback, for
// the tests of packages reliability and raknet: an offline ping and pong,
// the open-connection and online handshakes, 16 reliable ordered messages
// each way (some split) and a disconnection notification. Both packages
// replay it, so it is stored once, in the test binaries that import this
// package.
package rakcapture

import (
	_ "embed"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"testing"
)

//go:embed raknet_cpp_session.json
var session []byte

// Datagrams is how many UDP payloads the session holds.
const Datagrams = 262

// Datagram is one UDP payload of the session.
type Datagram struct {
	// T is when it was captured, in seconds from the start of the capture.
	T float64
	// From is the peer that sent it: "client" or "server".
	From string
	// ClientPort is the client socket's port: the offline ping comes from
	// a socket of its own.
	ClientPort int
	// Data is the payload.
	Data []byte
}

// Load decodes the session's datagrams, in the order they were captured.
// Every call decodes them afresh, so a test may change what it gets.
func Load(tb testing.TB) []Datagram {
	tb.Helper()
	var doc struct {
		Datagrams []struct {
			T          float64 `json:"t"`
			From       string  `json:"from"`
			ClientPort int     `json:"client_port"`
			Hex        string  `json:"hex"`
		} `json:"datagrams"`
	}
	if err := json.Unmarshal(session, &doc); err != nil {
		tb.Fatal(err)
	}
	if len(doc.Datagrams) != Datagrams {
		tb.Fatalf("capture holds %d datagrams, want %d", len(doc.Datagrams), Datagrams)
	}
	out := make([]Datagram, len(doc.Datagrams))
	for i, d := range doc.Datagrams {
		b, err := hex.DecodeString(d.Hex)
		if err != nil {
			tb.Fatalf("datagram %d: %v", i, err)
		}
		out[i] = Datagram{T: d.T, From: d.From, ClientPort: d.ClientPort, Data: b}
	}
	return out
}

// UserMessages is how many user messages each peer sent.
const UserMessages = 16

// UserMessage is user message i, as each peer sent it: byte 0 is 0x86
// (ID_USER_PACKET_ENUM), bytes 1..4 are i little-endian, and byte k >= 5
// is (i*31 + k*7) mod 256; the sizes cycle through 5, 5, 100, 576, 1400,
// 1500, 5000 and 70000 bytes, so that some messages are split.
func UserMessage(i int) []byte {
	sizes := [...]int{5, 5, 100, 576, 1400, 1500, 5000, 70000}
	b := make([]byte, sizes[i%len(sizes)])
	b[0] = 0x86
	binary.LittleEndian.PutUint32(b[1:], uint32(i))
	for k := 5; k < len(b); k++ {
		b[k] = byte(i*31 + k*7)
	}
	return b
}
