package netcode

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"net/netip"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// Every parser has a fuzz target. Each checks the contract every wire type
// shares: the parser never panics, reports all of b used when it accepts
// it (a packet is a whole datagram, a token has one size), overwrites
// every field of what it parses into, and what it accepts appends to
// Len() bytes that parse back to the same value.

// lener is a pointer to a wire type T.
type lener[T any] interface {
	*T
	Len() int
}

// wireOpts explain a difference that reflect.DeepEqual, the fast check
// that keeps the fuzz targets quick on 2 KB tokens, has found.
var wireOpts = []cmp.Option{cmp.Comparer(addrPortEqual), cmpopts.EquateEmpty()}

// checkParse parses b into a zero T and into dirty, a T with every field
// set, and checks that both agree. If b parses, the value must encode with
// enc to Len() bytes that parse back, whole, to the same value. It returns
// what b parsed to, if it did.
func checkParse[T any, P lener[T]](t *testing.T, b []byte, dirty T, parse func([]byte, *T) (int, error), enc func(*T) ([]byte, error)) (T, bool) {
	t.Helper()
	var x T
	n, err := parse(b, &x)
	n2, err2 := parse(b, &dirty)
	if n != n2 || !errors.Is(err2, err) {
		t.Fatalf("parse into a zero value: %d, %v; into a used one: %d, %v", n, err, n2, err2)
	}
	if err != nil {
		if n != 0 {
			t.Fatalf("parser failed with %v but used %d bytes", err, n)
		}
		return x, false
	}
	if n != len(b) {
		t.Fatalf("parser used %d of %d bytes", n, len(b))
	}
	if !reflect.DeepEqual(x, dirty) {
		t.Fatalf("parse into a used value kept old fields (-zero +used):\n%s", cmp.Diff(x, dirty, wireOpts...))
	}
	e, err := enc(&x)
	if err != nil {
		t.Fatalf("accepted value does not re-encode: %v", err)
	}
	if len(e) != P(&x).Len() {
		t.Fatalf("Len() = %d, appended %d bytes", P(&x).Len(), len(e))
	}
	var y T
	if n, err := parse(e, &y); err != nil || n != len(e) {
		t.Fatalf("re-encoded value: parser used %d of %d bytes, %v", n, len(e), err)
	}
	if !reflect.DeepEqual(x, y) {
		t.Fatalf("round trip (-first +second):\n%s", cmp.Diff(x, y, wireOpts...))
	}
	return x, true
}

// appendNew encodes x, a wire value whose Append needs no context, into a
// new slice.
func appendNew[T any, P interface {
	*T
	appender
}](x *T) ([]byte, error) {
	return P(x).Append(nil)
}

// Values with every field set, to parse into. Each call makes new storage,
// since parsers reuse a list's.
func dirtyAddrs() []netip.AddrPort {
	a := netip.MustParseAddrPort("[2001:db8::99]:9")
	return []netip.AddrPort{a, a, a}
}

func dirtyPacket() Packet {
	return Packet{Type: ConnectionChallenge, Sequence: 99, ChallengeSequence: 7, ChallengeToken: [ChallengeTokenBytes]byte{1, 2, 3},
		ClientIndex: 5, MaxClients: 6, Payload: []byte("dirty")}
}

func dirtyConnectToken() ConnectToken {
	return ConnectToken{ProtocolID: 1, CreateTimestamp: 2, ExpireTimestamp: 3, Nonce: [ConnectTokenNonceBytes]byte{4},
		PrivateData: [ConnectTokenPrivateBytes]byte{5}, TimeoutSeconds: 6, ServerAddresses: dirtyAddrs(),
		ClientToServerKey: Key{7}, ServerToClientKey: Key{8}}
}

func dirtyConnectTokenPrivate() ConnectTokenPrivate {
	return ConnectTokenPrivate{ClientID: 1, TimeoutSeconds: 2, ServerAddresses: dirtyAddrs(),
		ClientToServerKey: Key{3}, ServerToClientKey: Key{4}, UserData: [UserDataBytes]byte{5}}
}

func seedPackets(f *testing.F) *vectors {
	v := loadVectors(f)
	for _, p := range v.Packets {
		f.Add([]byte(p.Bytes))
	}
	return v
}

func FuzzPacket(f *testing.F) {
	v := seedPackets(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		c := NewPacketCipher(Key(v.PacketKey), uint64(v.Inputs.ProtocolID))
		parse := func(b []byte, p *Packet) (int, error) {
			// Decryption is in place, and each parse needs a window of its own.
			return ParsePacket(bytes.Clone(b), c, ServerReceives|ClientReceives, new(ReplayProtection), p)
		}
		checkParse(t, b, dirtyPacket(), parse, func(p *Packet) ([]byte, error) { return p.Append(nil, c) })
	})
}

func FuzzPacketNoKey(f *testing.F) {
	seedPackets(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		var p Packet
		for _, accept := range []PacketTypes{ServerReceives, ClientReceives} {
			var r ReplayProtection
			n, err := ParsePacket(bytes.Clone(b), nil, accept, &r, &p)
			if err == nil || n != 0 {
				t.Fatalf("packet accepted without a cipher: %d, %v", n, err)
			}
			if r != (ReplayProtection{}) {
				t.Fatal("replay window moved without decryption")
			}
		}
	})
}

func FuzzRequestPacket(f *testing.F) {
	v := seedPackets(f)
	protocolID := uint64(v.Inputs.ProtocolID)
	f.Fuzz(func(t *testing.T, b []byte) {
		parse := func(b []byte, r *RequestPacket) (int, error) { return ParseRequestPacket(b, protocolID, 0, r) }
		dirty := RequestPacket{ProtocolID: 1, ExpireTimestamp: 2, TokenNonce: [ConnectTokenNonceBytes]byte{3}, TokenData: [ConnectTokenPrivateBytes]byte{4}}
		if req, ok := checkParse(t, b, dirty, parse, appendNew[RequestPacket]); ok {
			if enc := mustAppend(t, &req); !bytes.Equal(enc, b) {
				t.Fatalf("request re-encodes differently:\n got %x\nwant %x", enc, b)
			}
		}
	})
}

func FuzzConnectToken(f *testing.F) {
	v := loadVectors(f)
	f.Add([]byte(v.ConnectToken.Bytes))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkParse(t, b, dirtyConnectToken(), ParseConnectToken, appendNew[ConnectToken])
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
		checkParse(t, b, dirtyConnectTokenPrivate(), ParseConnectTokenPrivate, appendNew[ConnectTokenPrivate])
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
		dirty := ChallengeToken{ClientID: 1, UserData: [UserDataBytes]byte{2}}
		checkParse(t, b, dirty, ParseChallengeToken, appendNew[ChallengeToken])
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

// FuzzPacketSealed reaches the checks after decryption, which random bytes
// never do: it seals arbitrary per-type data under the right key, so
// ParsePacket must accept exactly the packets whose type and data size are
// valid, and return what was sealed, whatever the packet it parses into
// held before.
func FuzzPacketSealed(f *testing.F) {
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
		p := dirtyPacket()
		n, err := ParsePacket(pkt, c, ServerReceives|ClientReceives, new(ReplayProtection), &p)
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
		if n != len(pkt) {
			t.Fatalf("used %d of %d bytes", n, len(pkt))
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
