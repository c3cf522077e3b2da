package netcode

import (
	"strconv"
	"testing"

	"golang.org/x/crypto/chacha20poly1305"
)

var benchSizes = []int{100, 1200}

// BenchmarkPayloadWrite measures building and encrypting one payload packet
// into a reused buffer.
func BenchmarkPayloadWrite(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			c := NewPacketCipher(testPacketKey, testProtocolID)
			p := Packet{Type: ConnectionPayload, Payload: payloadVector(n)}
			buf := make([]byte, 0, MaxPacketBytes)
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				p.Sequence++
				var err error
				if buf, err = p.Append(buf[:0], c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPayloadRead measures the receive path: cheap checks, replay
// check, decryption in place, window advance, size check. Each iteration
// first copies a pre-sealed packet into the work buffer (decryption is in
// place); the raw AEAD benchmark does the same copy.
func BenchmarkPayloadRead(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			c := NewPacketCipher(testPacketKey, testProtocolID)
			const ring = 1024
			sealed := make([][]byte, ring)
			for i := range sealed {
				p := Packet{Type: ConnectionPayload, Sequence: uint64(i), Payload: payloadVector(n)}
				sealed[i], _ = p.Append(nil, c)
			}
			buf := make([]byte, MaxPacketBytes)
			var r ReplayProtection
			var p Packet
			b.SetBytes(int64(n))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if i == ring {
					i = 0
					r.Reset()
				}
				in := buf[:copy(buf, sealed[i])]
				if _, err := ParsePacket(in, c, ServerReceives, &r, &p); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkRawAEAD is the floor: ChaCha20-Poly1305 seal and open of the
// same sizes with no framing.
func BenchmarkRawAEAD(b *testing.B) {
	aead, _ := chacha20poly1305.New(testPacketKey[:])
	var nonce [12]byte
	ad := make([]byte, packetAssociatedDataBytes)
	for _, n := range benchSizes {
		plain := payloadVector(n)
		buf := make([]byte, 0, n+MACBytes)
		b.Run("Seal/"+strconv.Itoa(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				buf = aead.Seal(buf[:0], nonce[:], plain, ad)
			}
		})
		sealed := aead.Seal(nil, nonce[:], plain, ad)
		work := make([]byte, len(sealed))
		b.Run("Open/"+strconv.Itoa(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				copy(work, sealed)
				if _, err := aead.Open(work[:0], nonce[:], work, ad); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkConnectionRequestWire measures the wire part of processing a
// connection request: the cheap checks, then, for a valid packet, opening
// the private token. Rejects must cost a small fraction of a valid request.
func BenchmarkConnectionRequestWire(b *testing.B) {
	v := loadVectors(b)
	protocolID := uint64(v.Inputs.ProtocolID)
	var valid []byte
	for _, p := range v.Packets {
		if p.Type == "connection_request" {
			valid = p.Bytes
		}
	}
	now := v.Inputs.CreateTimestamp
	badVersion := append([]byte(nil), valid...)
	badVersion[5] = 'x'
	cases := []struct {
		name string
		pkt  []byte
		now  uint64
		ok   bool
	}{
		{"valid", valid, now, true},
		{"bad_size", valid[:1000], now, false},
		{"bad_version", badVersion, now, false},
		{"expired", valid, v.Inputs.ExpireTimestamp, false},
	}
	c := NewTokenCipher(Key(v.Inputs.PrivateKey))
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			var req RequestPacket
			var priv ConnectTokenPrivate
			b.ReportAllocs()
			for b.Loop() {
				_, err := ParseRequestPacket(tc.pkt, protocolID, tc.now, &req)
				if err == nil {
					err = c.Open(&req.TokenData, req.ProtocolID, req.ExpireTimestamp, &req.TokenNonce, &priv)
				}
				if (err == nil) != tc.ok {
					b.Fatal(err)
				}
			}
		})
	}
}
