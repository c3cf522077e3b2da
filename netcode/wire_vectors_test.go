package netcode

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"net/netip"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// vectors mirrors testdata/netcode_vectors.json, produced by the netcode C
// reference from fixed inputs.
type vectors struct {
	Inputs struct {
		PrivateKey         hexBytes `json:"private_key"`
		ClientToServerKey  hexBytes `json:"client_to_server_key"`
		ServerToClientKey  hexBytes `json:"server_to_client_key"`
		UserData           hexBytes `json:"user_data"`
		ConnectTokenNonce  hexBytes `json:"connect_token_nonce"`
		ProtocolID         hexU64   `json:"protocol_id"`
		CreateTimestamp    uint64   `json:"create_timestamp"`
		ExpireTimestamp    uint64   `json:"expire_timestamp"`
		ClientID           hexU64   `json:"client_id"`
		TimeoutSeconds     int32    `json:"timeout_seconds"`
		ServerAddressTexts []string `json:"server_addresses"`
	} `json:"inputs"`
	ConnectTokenPrivate struct {
		Plaintext hexBytes `json:"plaintext_1024"`
		Encrypted hexBytes `json:"encrypted_1024"`
	} `json:"connect_token_private"`
	ConnectToken struct {
		Bytes hexBytes `json:"bytes_2048"`
	} `json:"connect_token"`
	ChallengeToken struct {
		Key       hexBytes `json:"key"`
		Sequence  uint64   `json:"sequence"`
		Plaintext hexBytes `json:"plaintext_300"`
		Encrypted hexBytes `json:"encrypted_300"`
	} `json:"challenge_token"`
	PacketKey hexBytes       `json:"packet_key"`
	Packets   []packetVector `json:"packets"`
}

type packetVector struct {
	Type              string   `json:"type"`
	Sequence          uint64   `json:"sequence"`
	ChallengeSequence uint64   `json:"challenge_token_sequence"`
	ClientIndex       uint32   `json:"client_index"`
	MaxClients        uint32   `json:"max_clients"`
	PayloadBytes      int      `json:"payload_bytes"`
	Bytes             hexBytes `json:"bytes"`
}

type hexBytes []byte

func (h *hexBytes) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := hex.DecodeString(s)
	*h = v
	return err
}

type hexU64 uint64

func (h *hexU64) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := strconv.ParseUint(s, 0, 64)
	*h = hexU64(v)
	return err
}

func loadVectors(tb testing.TB) *vectors {
	tb.Helper()
	raw, err := os.ReadFile("testdata/netcode_vectors.json")
	if err != nil {
		tb.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(raw, &v); err != nil {
		tb.Fatal(err)
	}
	return &v
}

func (v *vectors) addresses(tb testing.TB) []netip.AddrPort {
	var out []netip.AddrPort
	for _, s := range v.Inputs.ServerAddressTexts {
		a, err := netip.ParseAddrPort(s)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

func (v *vectors) privateToken(tb testing.TB) ConnectTokenPrivate {
	t := ConnectTokenPrivate{
		ClientID:          uint64(v.Inputs.ClientID),
		TimeoutSeconds:    v.Inputs.TimeoutSeconds,
		ServerAddresses:   v.addresses(tb),
		ClientToServerKey: Key(v.Inputs.ClientToServerKey),
		ServerToClientKey: Key(v.Inputs.ServerToClientKey),
	}
	copy(t.UserData[:], v.Inputs.UserData)
	return t
}

// payloadVector is the payload rule of the vectors: byte i = (i*3+1) mod 256.
func payloadVector(n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(i*3 + 1)
	}
	return p
}

var packetTypeByName = map[string]PacketType{
	"connection_request":    ConnectionRequest,
	"connection_denied":     ConnectionDenied,
	"connection_challenge":  ConnectionChallenge,
	"connection_response":   ConnectionResponse,
	"connection_keep_alive": ConnectionKeepAlive,
	"connection_payload":    ConnectionPayload,
	"connection_disconnect": ConnectionDisconnect,
}

func TestVectorPrivateToken(t *testing.T) {
	v := loadVectors(t)
	tok := v.privateToken(t)

	plain, err := tok.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(plain, v.ConnectTokenPrivate.Plaintext) {
		t.Fatalf("plaintext differs:\n got %x\nwant %x", plain, []byte(v.ConnectTokenPrivate.Plaintext))
	}
	var decoded ConnectTokenPrivate
	if err := decoded.UnmarshalBinary(v.ConnectTokenPrivate.Plaintext); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(tok, decoded, cmp.Comparer(addrPortEqual)); diff != "" {
		t.Fatalf("decoded plaintext (-want +got):\n%s", diff)
	}

	nonce := [ConnectTokenNonceBytes]byte(v.Inputs.ConnectTokenNonce)
	c := NewTokenCipher(Key(v.Inputs.PrivateKey))
	sealed, err := c.Seal(&tok, uint64(v.Inputs.ProtocolID), v.Inputs.ExpireTimestamp, &nonce)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(sealed[:], v.ConnectTokenPrivate.Encrypted) {
		t.Fatalf("sealed differs:\n got %x\nwant %x", sealed, []byte(v.ConnectTokenPrivate.Encrypted))
	}
	var opened ConnectTokenPrivate
	if err := c.Open(&sealed, uint64(v.Inputs.ProtocolID), v.Inputs.ExpireTimestamp, &nonce, &opened); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(tok, opened, cmp.Comparer(addrPortEqual)); diff != "" {
		t.Fatalf("opened token (-want +got):\n%s", diff)
	}
	// The associated data binds protocol id and expiry.
	if err := c.Open(&sealed, uint64(v.Inputs.ProtocolID)+1, v.Inputs.ExpireTimestamp, &nonce, &opened); err != ErrDecrypt {
		t.Fatalf("open with another protocol id: %v, want ErrDecrypt", err)
	}
	if err := c.Open(&sealed, uint64(v.Inputs.ProtocolID), v.Inputs.ExpireTimestamp+1, &nonce, &opened); err != ErrDecrypt {
		t.Fatalf("open with another expiry: %v, want ErrDecrypt", err)
	}
}

// fixedReader serves the given bytes in order, as the randomness source.
type fixedReader struct{ b []byte }

func (r *fixedReader) Read(p []byte) (int, error) {
	n := copy(p, r.b)
	r.b = r.b[n:]
	if n == 0 && len(p) > 0 {
		return 0, os.ErrDeadlineExceeded
	}
	return n, nil
}

func (v *vectors) tokenParams(tb testing.TB) *TokenParams {
	var rnd []byte
	rnd = append(rnd, v.Inputs.ClientToServerKey...)
	rnd = append(rnd, v.Inputs.ServerToClientKey...)
	rnd = append(rnd, v.Inputs.ConnectTokenNonce...)
	p := &TokenParams{
		ClientID:        uint64(v.Inputs.ClientID),
		PublicAddresses: v.addresses(tb),
		Expiry:          time.Duration(v.Inputs.ExpireTimestamp-v.Inputs.CreateTimestamp) * time.Second,
		Timeout:         time.Duration(v.Inputs.TimeoutSeconds) * time.Second,
		ProtocolID:      uint64(v.Inputs.ProtocolID),
		PrivateKey:      Key(v.Inputs.PrivateKey),
		Now:             time.Unix(int64(v.Inputs.CreateTimestamp), 0),
		Rand:            &fixedReader{rnd},
	}
	copy(p.UserData[:], v.Inputs.UserData)
	return p
}

func TestVectorConnectToken(t *testing.T) {
	v := loadVectors(t)
	got, err := GenerateConnectToken(v.tokenParams(t))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, v.ConnectToken.Bytes) {
		t.Fatalf("token differs:\n got %x\nwant %x", got, []byte(v.ConnectToken.Bytes))
	}

	var tok ConnectToken
	if err := tok.UnmarshalBinary(v.ConnectToken.Bytes); err != nil {
		t.Fatal(err)
	}
	want := ConnectToken{
		ProtocolID:        uint64(v.Inputs.ProtocolID),
		CreateTimestamp:   v.Inputs.CreateTimestamp,
		ExpireTimestamp:   v.Inputs.ExpireTimestamp,
		Nonce:             [ConnectTokenNonceBytes]byte(v.Inputs.ConnectTokenNonce),
		PrivateData:       [ConnectTokenPrivateBytes]byte(v.ConnectTokenPrivate.Encrypted),
		TimeoutSeconds:    v.Inputs.TimeoutSeconds,
		ServerAddresses:   v.addresses(t),
		ClientToServerKey: Key(v.Inputs.ClientToServerKey),
		ServerToClientKey: Key(v.Inputs.ServerToClientKey),
	}
	if diff := cmp.Diff(want, tok, cmp.Comparer(addrPortEqual)); diff != "" {
		t.Fatalf("decoded token (-want +got):\n%s", diff)
	}
	again, err := tok.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, v.ConnectToken.Bytes) {
		t.Fatal("re-encoded token differs from the vector")
	}
}

func TestVectorChallengeToken(t *testing.T) {
	v := loadVectors(t)
	tok := ChallengeToken{ClientID: uint64(v.Inputs.ClientID)}
	copy(tok.UserData[:], v.Inputs.UserData)

	if got := tok.AppendBinary(nil); !bytes.Equal(got, v.ChallengeToken.Plaintext) {
		t.Fatalf("plaintext differs:\n got %x\nwant %x", got, []byte(v.ChallengeToken.Plaintext))
	}
	c := NewChallengeCipher(Key(v.ChallengeToken.Key))
	sealed := c.Seal(&tok, v.ChallengeToken.Sequence)
	if !bytes.Equal(sealed[:], v.ChallengeToken.Encrypted) {
		t.Fatalf("sealed differs:\n got %x\nwant %x", sealed, []byte(v.ChallengeToken.Encrypted))
	}
	var opened ChallengeToken
	if err := c.Open(&sealed, v.ChallengeToken.Sequence, &opened); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(tok, opened); diff != "" {
		t.Fatalf("opened (-want +got):\n%s", diff)
	}
	if err := c.Open(&sealed, v.ChallengeToken.Sequence+1, &opened); err != ErrDecrypt {
		t.Fatalf("open with another sequence: %v, want ErrDecrypt", err)
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
				if got := want.Append(nil); !bytes.Equal(got, pv.Bytes) {
					t.Fatalf("encoding differs:\n got %x\nwant %x", got, []byte(pv.Bytes))
				}
				var got RequestPacket
				if err := ReadRequestPacket(pv.Bytes, protocolID, v.Inputs.CreateTimestamp, &got); err != nil {
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
			if err := ReadPacket(in, c, ServerReceives|ClientReceives, new(ReplayProtection), &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("decoded (-want +got):\n%s", diff)
			}
		})
	}
}

func addrPortEqual(a, b netip.AddrPort) bool { return a == b }
