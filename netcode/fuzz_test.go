package netcode

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Every fuzz target checks that its parser never panics and that whatever
// it accepts re-encodes to something it decodes to the same value.

func seedPackets(f *testing.F) *vectors {
	v := loadVectors(f)
	for _, p := range v.Packets {
		f.Add([]byte(p.Bytes))
	}
	return v
}

func FuzzReadPacket(f *testing.F) {
	v := seedPackets(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		c := NewPacketCipher(Key(v.PacketKey), uint64(v.Inputs.ProtocolID))
		var p Packet
		if err := ReadPacket(bytes.Clone(b), c, ServerReceives|ClientReceives, new(ReplayProtection), &p); err != nil {
			return
		}
		enc, err := p.Append(nil, c)
		if err != nil {
			t.Fatalf("accepted packet does not re-encode: %v", err)
		}
		var q Packet
		if err := ReadPacket(enc, c, ServerReceives|ClientReceives, new(ReplayProtection), &q); err != nil {
			t.Fatalf("re-encoded packet rejected: %v", err)
		}
		if diff := cmp.Diff(p, q); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}

func FuzzReadPacketNoKey(f *testing.F) {
	v := seedPackets(f)
	protocolID := uint64(v.Inputs.ProtocolID)
	f.Fuzz(func(t *testing.T, b []byte) {
		var p Packet
		for _, accept := range []PacketTypes{ServerReceives, ClientReceives} {
			var r ReplayProtection
			err := ReadPacket(bytes.Clone(b), nil, accept, &r, &p)
			if err == nil {
				t.Fatal("packet accepted without a cipher")
			}
			if r != (ReplayProtection{}) {
				t.Fatal("replay window moved without decryption")
			}
		}
		var req RequestPacket
		if err := ReadRequestPacket(b, protocolID, 0, &req); err == nil {
			if enc := req.Append(nil); !bytes.Equal(enc, b) {
				t.Fatalf("request re-encodes differently:\n got %x\nwant %x", enc, b)
			}
		}
	})
}

func FuzzConnectToken(f *testing.F) {
	v := loadVectors(f)
	f.Add([]byte(v.ConnectToken.Bytes))
	f.Fuzz(func(t *testing.T, b []byte) {
		var tok ConnectToken
		if err := tok.UnmarshalBinary(b); err != nil {
			return
		}
		enc, err := tok.MarshalBinary()
		if err != nil {
			t.Fatalf("accepted token does not re-encode: %v", err)
		}
		var again ConnectToken
		if err := again.UnmarshalBinary(enc); err != nil {
			t.Fatalf("re-encoded token rejected: %v", err)
		}
		if diff := cmp.Diff(tok, again, cmp.Comparer(addrPortEqual)); diff != "" {
			t.Fatalf("round trip:\n%s", diff)
		}
	})
}

func FuzzConnectTokenPrivate(f *testing.F) {
	v := loadVectors(f)
	f.Add([]byte(v.ConnectTokenPrivate.Plaintext))
	f.Add([]byte(v.ConnectTokenPrivate.Encrypted))
	f.Fuzz(func(t *testing.T, b []byte) {
		// Sealed form: must fail cleanly unless it is the vector itself.
		if len(b) == ConnectTokenPrivateBytes {
			sealed := [ConnectTokenPrivateBytes]byte(b)
			nonce := [ConnectTokenNonceBytes]byte(v.Inputs.ConnectTokenNonce)
			var opened ConnectTokenPrivate
			err := NewTokenCipher(Key(v.Inputs.PrivateKey)).Open(&sealed, uint64(v.Inputs.ProtocolID), v.Inputs.ExpireTimestamp, &nonce, &opened)
			if err != nil && !errors.Is(err, ErrDecrypt) {
				t.Fatalf("Open: %v", err)
			}
		}
		// Plaintext form.
		var tok ConnectTokenPrivate
		if err := tok.UnmarshalBinary(b); err != nil {
			return
		}
		enc, err := tok.AppendBinary(nil)
		if err != nil {
			t.Fatalf("accepted token does not re-encode: %v", err)
		}
		var again ConnectTokenPrivate
		if err := again.UnmarshalBinary(enc); err != nil {
			t.Fatalf("re-encoded token rejected: %v", err)
		}
		if diff := cmp.Diff(tok, again, cmp.Comparer(addrPortEqual)); diff != "" {
			t.Fatalf("round trip:\n%s", diff)
		}
	})
}

func FuzzChallengeToken(f *testing.F) {
	v := loadVectors(f)
	f.Add([]byte(v.ChallengeToken.Plaintext), v.ChallengeToken.Sequence)
	f.Add([]byte(v.ChallengeToken.Encrypted), v.ChallengeToken.Sequence)
	f.Fuzz(func(t *testing.T, b []byte, seq uint64) {
		c := NewChallengeCipher(Key(v.ChallengeToken.Key))
		if len(b) == ChallengeTokenBytes {
			sealed := [ChallengeTokenBytes]byte(b)
			var opened ChallengeToken
			if err := c.Open(&sealed, seq, &opened); err == nil {
				if resealed := c.Seal(&opened, seq); resealed != sealed {
					t.Fatal("opened token reseals differently")
				}
			} else if !errors.Is(err, ErrDecrypt) {
				t.Fatalf("Open: %v", err)
			}
		}
		var tok ChallengeToken
		if err := tok.UnmarshalBinary(b); err != nil {
			return
		}
		var again ChallengeToken
		if err := again.UnmarshalBinary(tok.AppendBinary(nil)); err != nil || again != tok {
			t.Fatalf("round trip: %v", err)
		}
	})
}

func FuzzAddress(f *testing.F) {
	f.Add([]byte{1, 127, 0, 0, 1, 0x40, 0x9c})
	f.Add([]byte{2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0x41, 0x9c})
	f.Add([]byte{3})
	f.Fuzz(func(t *testing.T, b []byte) {
		a, n, err := parseAddress(b)
		if err != nil {
			return
		}
		if n != addressLen(a) || n > len(b) {
			t.Fatalf("used %d bytes, addressLen %d, input %d", n, addressLen(a), len(b))
		}
		enc, err := appendAddress(nil, a)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(enc, b[:n]) {
			t.Fatalf("re-encoding %x, want %x", enc, b[:n])
		}
	})
}

// FuzzReadPacketSealed reaches the checks after decryption, which random
// bytes never do: it seals arbitrary per-type data under the right key, so
// ReadPacket must accept exactly the packets whose type and data size are
// valid, and return what was sealed.
func FuzzReadPacketSealed(f *testing.F) {
	f.Add(uint8(ConnectionPayload), uint64(0), []byte("hello"))
	f.Add(uint8(ConnectionKeepAlive), uint64(1000), make([]byte, 8))
	f.Add(uint8(ConnectionChallenge), uint64(1<<63), make([]byte, challengeDataBytes))
	f.Add(uint8(ConnectionDisconnect), ^uint64(0), []byte{})
	f.Add(uint8(ConnectionDenied), uint64(5), []byte{1})
	f.Fuzz(func(t *testing.T, typ uint8, seq uint64, data []byte) {
		if len(data) > MaxPacketBytes {
			return
		}
		c := NewPacketCipher(testPacketKey, testProtocolID)
		pkt := sealRaw(c, PacketType(typ&0x0f), seq, data)
		var p Packet
		err := ReadPacket(pkt, c, ServerReceives|ClientReceives, new(ReplayProtection), &p)
		want := Packet{Type: PacketType(typ & 0x0f), Sequence: seq}
		switch want.Type {
		case ConnectionChallenge, ConnectionResponse:
			if len(data) == challengeDataBytes {
				want.ChallengeSequence = binary.LittleEndian.Uint64(data)
				want.ChallengeToken = [ChallengeTokenBytes]byte(data[8:])
			}
		case ConnectionKeepAlive:
			if len(data) == keepAliveDataBytes {
				want.ClientIndex = binary.LittleEndian.Uint32(data)
				want.MaxClients = binary.LittleEndian.Uint32(data[4:])
			}
		case ConnectionPayload:
			want.Payload = data
		}
		valid := want.Type != ConnectionRequest && want.Type < numPacketTypes && want.dataLen() == len(data)
		if want.Type == ConnectionPayload && (len(data) < 1 || len(data) > MaxPayloadBytes) {
			valid = false
		}
		if !valid {
			if err == nil {
				t.Fatalf("accepted type %d with %d bytes of data", typ&0x0f, len(data))
			}
			return
		}
		if err != nil {
			t.Fatalf("rejected valid packet: %v", err)
		}
		if diff := cmp.Diff(want, p, cmp.Comparer(bytes.Equal)); diff != "" {
			t.Fatalf("decoded (-want +got):\n%s", diff)
		}
	})
}

// FuzzTextForms covers the two text parsers a backend or a command line
// feeds: hex keys and base64 tokens.
func FuzzTextForms(f *testing.F) {
	v := loadVectors(f)
	f.Add("606abe6ec91910ea9a6562f66f2b30e44371d62cd19927266b3c60f4b715aba1")
	f.Add("60 6a be 6e c9 19 10 ea 9a 65 62 f6 6f 2b 30 e4 43 71 d6 2c d1 99 27 26 6b 3c 60 f4 b7 15 ab a1")
	f.Add(EncodeTokenBase64([]byte(v.ConnectToken.Bytes)))
	f.Fuzz(func(t *testing.T, s string) {
		if k, err := ParseKeyHex(s); err == nil {
			if again, err := ParseKeyHex(hex.EncodeToString(k[:])); err != nil || again != k {
				t.Fatalf("key %x does not round-trip: %x, %v", k, again, err)
			}
		}
		if b, err := DecodeTokenBase64(s); err == nil {
			if len(b) != ConnectTokenBytes {
				t.Fatalf("decoded token of %d bytes", len(b))
			}
			if again, err := DecodeTokenBase64(EncodeTokenBase64(b)); err != nil || !bytes.Equal(again, b) {
				t.Fatalf("token does not round-trip: %v", err)
			}
		}
	})
}
