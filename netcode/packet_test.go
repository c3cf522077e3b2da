package netcode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var testPacketKey = Key{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32}

const testProtocolID = 0x1122334455667788

// mustSeal seals p with c into a new slice.
func mustSeal(tb testing.TB, p *Packet, c *PacketCipher) []byte {
	tb.Helper()
	b, err := p.Append(nil, c)
	if err != nil {
		tb.Fatal(err)
	}
	if len(b) != p.Len() {
		tb.Fatalf("Len() = %d, appended %d bytes", p.Len(), len(b))
	}
	return b
}

// sealRaw builds an authentic packet with arbitrary per-type data, which
// Packet.Append refuses to produce.
func sealRaw(c *PacketCipher, typ PacketType, seq uint64, data []byte) []byte {
	n := sequenceBytes(seq)
	prefix := byte(n<<4) | byte(typ)
	b := make([]byte, 0, 1+n+len(data)+MACBytes)
	b = append(b, prefix)
	b = appendSequence(b, seq, n)
	b = append(b, data...)
	return c.sealInPlace(b, 1+n, prefix, seq)
}

func TestParsePacketRejects(t *testing.T) {
	c := NewPacketCipher(testPacketKey, testProtocolID)
	payload := &Packet{Type: ConnectionPayload, Sequence: 1000, Payload: []byte("hello")}
	valid := mustSeal(t, payload, c)
	with := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(valid)) }

	tests := []struct {
		name   string
		pkt    []byte
		c      *PacketCipher
		accept PacketTypes
		want   error
	}{
		{"empty", nil, c, ServerReceives, ErrPacketSize},
		{"17 bytes", valid[:17], c, ServerReceives, ErrPacketSize},
		{"over max size", make([]byte, MaxPacketBytes+1), c, ServerReceives, ErrPacketSize},
		{"type 0 with sequence bytes", with(func(b []byte) []byte { b[0] = 0x20; return b }), c, ServerReceives, ErrPacketType},
		{"type 7", with(func(b []byte) []byte { b[0] = 0x27; return b }), c, ServerReceives, ErrPacketType},
		{"type 15", with(func(b []byte) []byte { b[0] = 0x2f; return b }), c, ServerReceives, ErrPacketType},
		{"server drops challenge", sealRaw(c, ConnectionChallenge, 1, make([]byte, challengeDataBytes)), c, ServerReceives, ErrPacketType},
		{"server drops denied", sealRaw(c, ConnectionDenied, 1, nil), c, ServerReceives, ErrPacketType},
		{"client drops response", sealRaw(c, ConnectionResponse, 1, make([]byte, challengeDataBytes)), c, ClientReceives, ErrPacketType},
		{"zero sequence bytes", with(func(b []byte) []byte { b[0] = 0x05; return b }), c, ServerReceives, ErrSequenceBytes},
		{"nine sequence bytes", with(func(b []byte) []byte { b[0] = 0x95; return b }), c, ServerReceives, ErrSequenceBytes},
		{"shorter than header and tag", append([]byte{0x85}, make([]byte, 8+MACBytes-1)...), c, ServerReceives, ErrPacketSize},
		{"no cipher", valid, nil, ServerReceives, ErrNoCipher},
		{"tampered data", with(func(b []byte) []byte { b[4] ^= 1; return b }), c, ServerReceives, ErrDecrypt},
		{"tampered tag", with(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), c, ServerReceives, ErrDecrypt},
		{"tampered sequence", with(func(b []byte) []byte { b[1] ^= 1; return b }), c, ServerReceives, ErrDecrypt},
		{"prefix changed to keep-alive", with(func(b []byte) []byte { b[0] = 0x24; return b }), c, ServerReceives, ErrDecrypt},
		{"other key", valid, NewPacketCipher(Key{9}, testProtocolID), ServerReceives, ErrDecrypt},
		{"other protocol id", valid, NewPacketCipher(testPacketKey, testProtocolID+1), ServerReceives, ErrDecrypt},
		{"keep-alive data 4 bytes", sealRaw(c, ConnectionKeepAlive, 1, make([]byte, 4)), c, ServerReceives, ErrPacketSize},
		{"disconnect with data", sealRaw(c, ConnectionDisconnect, 1, []byte{1}), c, ServerReceives, ErrPacketSize},
		{"denied with data", sealRaw(c, ConnectionDenied, 1, []byte{1}), c, ClientReceives, ErrPacketSize},
		{"response data 307 bytes", sealRaw(c, ConnectionResponse, 1, make([]byte, 307)), c, ServerReceives, ErrPacketSize},
		{"empty payload", sealRaw(c, ConnectionPayload, 1, nil), c, ServerReceives, ErrPacketSize},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p Packet
			_, err := ParsePacket(bytes.Clone(tt.pkt), tt.c, tt.accept, new(ReplayProtection), &p)
			if !errors.Is(err, tt.want) {
				t.Fatalf("ParsePacket = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestParsePacketReplayOrder(t *testing.T) {
	c := NewPacketCipher(testPacketKey, testProtocolID)
	var r ReplayProtection
	var p Packet
	read := func(b []byte) error {
		_, err := ParsePacket(bytes.Clone(b), c, ServerReceives, &r, &p)
		return err
	}

	// A forged packet with a high sequence fails to decrypt and must not move
	// the window, or it would lock out the real sender.
	forged := sealRaw(NewPacketCipher(Key{7}, testProtocolID), ConnectionKeepAlive, 5000, make([]byte, 8))
	if err := read(forged); !errors.Is(err, ErrDecrypt) {
		t.Fatalf("forged: %v", err)
	}
	ka := mustSeal(t, &Packet{Type: ConnectionKeepAlive, Sequence: 3, ClientIndex: 1, MaxClients: 2}, c)
	if err := read(ka); err != nil {
		t.Fatalf("first delivery after forgery: %v", err)
	}
	if err := read(ka); !errors.Is(err, ErrReplayed) {
		t.Fatalf("second delivery: %v, want ErrReplayed", err)
	}

	// An authentic packet that fails only the per-type size check has been
	// authenticated, so it does advance the window (the reference's order).
	bad := sealRaw(c, ConnectionKeepAlive, 600, make([]byte, 3))
	if err := read(bad); !errors.Is(err, ErrPacketSize) {
		t.Fatalf("bad size: %v", err)
	}
	if err := read(bad); !errors.Is(err, ErrReplayed) {
		t.Fatalf("bad size again: %v, want ErrReplayed", err)
	}
	if err := read(ka); !errors.Is(err, ErrReplayed) {
		t.Fatalf("seq 3 after 600: %v, want ErrReplayed (outside window)", err)
	}

	// Challenge, response and denied packets are not replay protected.
	resp := mustSeal(t, &Packet{Type: ConnectionResponse, Sequence: 1}, c)
	for i := range 2 {
		if err := read(resp); err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
	}
}

func TestPacketAppendErrors(t *testing.T) {
	c := NewPacketCipher(testPacketKey, testProtocolID)
	tests := []struct {
		name string
		p    Packet
		c    *PacketCipher
		want error
	}{
		{"empty payload", Packet{Type: ConnectionPayload}, c, ErrPayloadSize},
		{"1201-byte payload", Packet{Type: ConnectionPayload, Payload: make([]byte, 1201)}, c, ErrPayloadSize},
		{"request type", Packet{Type: ConnectionRequest}, c, ErrPacketType},
		{"type 7", Packet{Type: 7}, c, ErrPacketType},
		{"no cipher", Packet{Type: ConnectionDisconnect}, nil, ErrNoCipher},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := tt.p.Append([]byte("keep"), tt.c)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Append = %v, want %v", err, tt.want)
			}
			if string(b) != "keep" {
				t.Fatalf("Append modified the buffer on error: %q", b)
			}
			if tt.p.Len() != 0 && tt.want != ErrNoCipher {
				t.Fatalf("Len() = %d for an unencodable packet", tt.p.Len())
			}
		})
	}
}

func TestSequenceEncoding(t *testing.T) {
	tests := []struct {
		seq  uint64
		n    int
		wire []byte
	}{
		{0, 1, []byte{0}},
		{0xff, 1, []byte{0xff}},
		{0x100, 2, []byte{0, 1}},
		{1000, 2, []byte{0xe8, 0x03}},
		{1 << 63, 8, []byte{0, 0, 0, 0, 0, 0, 0, 0x80}},
		{^uint64(0), 8, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
	}
	for _, tt := range tests {
		if n := sequenceBytes(tt.seq); n != tt.n {
			t.Errorf("sequenceBytes(%d) = %d, want %d", tt.seq, n, tt.n)
		}
		if b := appendSequence(nil, tt.seq, tt.n); !bytes.Equal(b, tt.wire) {
			t.Errorf("appendSequence(%d) = %x, want %x", tt.seq, b, tt.wire)
		}
		if s := readSequence(tt.wire, tt.n); s != tt.seq {
			t.Errorf("readSequence(%x) = %d", tt.wire, s)
		}
	}
}

func TestParseRequestPacketRejects(t *testing.T) {
	req := RequestPacket{ProtocolID: testProtocolID, ExpireTimestamp: 1000}
	valid := mustAppend(t, &req)
	with := func(f func(b []byte)) []byte { b := bytes.Clone(valid); f(b); return b }
	tests := []struct {
		name string
		pkt  []byte
		now  uint64
		want error
	}{
		{"valid", valid, 999, nil},
		{"short", valid[:ConnectionRequestBytes-1], 0, ErrPacketSize},
		{"long", append(bytes.Clone(valid), 0), 0, ErrPacketSize},
		{"prefix not zero", with(func(b []byte) { b[0] = 0x10 }), 0, ErrPacketType},
		{"version", with(func(b []byte) { b[11] = '1' }), 0, ErrVersion},
		{"missing terminator", with(func(b []byte) { b[13] = 'x' }), 0, ErrVersion},
		{"protocol id", with(func(b []byte) { b[14] ^= 1 }), 0, ErrProtocolID},
		{"expire == now", valid, 1000, ErrTokenExpired},
		{"expire < now", valid, 2000, ErrTokenExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got RequestPacket
			n, err := ParseRequestPacket(tt.pkt, testProtocolID, tt.now, &got)
			if !errors.Is(err, tt.want) {
				t.Fatalf("ParseRequestPacket = %v, want %v", err, tt.want)
			}
			if err == nil && n != ConnectionRequestBytes {
				t.Fatalf("ParseRequestPacket used %d bytes", n)
			}
			if err == nil && got != req {
				t.Fatal("decoded request differs")
			}
		})
	}
}

func TestPayloadPathDoesNotAllocate(t *testing.T) {
	c := NewPacketCipher(testPacketKey, testProtocolID)
	var r ReplayProtection
	payload := payloadVector(1200)
	buf := make([]byte, 0, MaxPacketBytes)
	p := Packet{Type: ConnectionPayload, Payload: payload}
	var in Packet
	var seq uint64
	allocs := testing.AllocsPerRun(100, func() {
		p.Sequence = seq
		seq++
		b, err := p.Append(buf[:0], c)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParsePacket(b, c, ServerReceives, &r, &in); err != nil {
			t.Fatal(err)
		}
		if binary.LittleEndian.Uint16(in.Payload) != binary.LittleEndian.Uint16(payload) {
			t.Fatal("payload corrupted")
		}
	})
	if allocs != 0 {
		t.Fatalf("payload write+read allocates %.1f times per packet", allocs)
	}
}

func TestVectorPackets(t *testing.T) {
	v := loadVectors(t)
	protocolID := uint64(v.Inputs.ProtocolID)
	for _, pv := range v.Packets {
		name := pv.Type + "/" + strconv.FormatUint(pv.Sequence, 10) + "/" + strconv.Itoa(pv.PayloadBytes)
		t.Run(name, func(t *testing.T) {
			typ, ok := packetTypeByName[pv.Type]
			if !ok {
				t.Fatalf("unknown type %q", pv.Type)
			}
			if typ == ConnectionRequest {
				want := RequestPacket{
					ProtocolID:      protocolID,
					ExpireTimestamp: v.Inputs.ExpireTimestamp,
					TokenNonce:      [ConnectTokenNonceBytes]byte(v.Inputs.ConnectTokenNonce),
					TokenData:       [ConnectTokenPrivateBytes]byte(v.ConnectTokenPrivate.Encrypted),
				}
				if got := mustAppend(t, &want); !bytes.Equal(got, pv.Bytes) {
					t.Fatalf("encoding differs:\n got %x\nwant %x", got, []byte(pv.Bytes))
				}
				var got RequestPacket
				if _, err := ParseRequestPacket(pv.Bytes, protocolID, v.Inputs.CreateTimestamp, &got); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("decoded (-want +got):\n%s", diff)
				}
				return
			}

			want := Packet{Type: typ, Sequence: pv.Sequence}
			switch typ {
			case ConnectionChallenge, ConnectionResponse:
				want.ChallengeSequence = pv.ChallengeSequence
				want.ChallengeToken = [ChallengeTokenBytes]byte(v.ChallengeToken.Encrypted)
			case ConnectionKeepAlive:
				want.ClientIndex, want.MaxClients = pv.ClientIndex, pv.MaxClients
			case ConnectionPayload:
				want.Payload = payloadVector(pv.PayloadBytes)
			}
			c := NewPacketCipher(Key(v.PacketKey), protocolID)
			enc, err := want.Append(nil, c)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(enc, pv.Bytes) {
				t.Fatalf("encoding differs:\n got %x\nwant %x", enc, []byte(pv.Bytes))
			}
			if want.Len() != len(pv.Bytes) {
				t.Fatalf("Len() = %d, want %d", want.Len(), len(pv.Bytes))
			}

			in := bytes.Clone(pv.Bytes)
			var got Packet
			if _, err := ParsePacket(in, c, ServerReceives|ClientReceives, new(ReplayProtection), &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("decoded (-want +got):\n%s", diff)
			}
		})
	}
}
