package netcode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestConnectTokenRejects(t *testing.T) {
	v := loadVectors(t)
	valid := []byte(v.ConnectToken.Bytes)
	// Offsets in the public token.
	const (
		createAt  = VersionInfoBytes + 8
		expireAt  = createAt + 8
		timeoutAt = expireAt + 8 + ConnectTokenNonceBytes + ConnectTokenPrivateBytes
		countAt   = timeoutAt + 4
		addrAt    = countAt + 4
	)
	with := func(f func(b []byte)) []byte { b := bytes.Clone(valid); f(b); return b }
	tests := []struct {
		name string
		b    []byte
		want error
	}{
		{"short", valid[:ConnectTokenBytes-1], ErrTokenSize},
		{"version", with(func(b []byte) { b[0] = 'n' }), ErrVersion},
		{"zero addresses", with(func(b []byte) { binary.LittleEndian.PutUint32(b[countAt:], 0) }), ErrServerAddressCount},
		{"33 addresses", with(func(b []byte) { binary.LittleEndian.PutUint32(b[countAt:], 33) }), ErrServerAddressCount},
		{"huge count", with(func(b []byte) { binary.LittleEndian.PutUint32(b[countAt:], 1<<31) }), ErrServerAddressCount},
		{"address type 0", with(func(b []byte) { b[addrAt] = 0 }), ErrAddress},
		{"address type 3", with(func(b []byte) { b[addrAt] = 3 }), ErrAddress},
		{"created after expiry", with(func(b []byte) {
			binary.LittleEndian.PutUint64(b[createAt:], binary.LittleEndian.Uint64(b[expireAt:])+1)
		}), ErrTokenTimestamps},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tok ConnectToken
			if _, err := ParseConnectToken(tt.b, &tok); !errors.Is(err, tt.want) {
				t.Fatalf("ParseConnectToken = %v, want %v", err, tt.want)
			}
		})
	}
	// 32 addresses of the largest kind still fit.
	var tok ConnectToken
	if _, err := ParseConnectToken(valid, &tok); err != nil {
		t.Fatal(err)
	}
	tok.ServerAddresses = nil
	for i := range MaxServersPerConnect {
		tok.ServerAddresses = append(tok.ServerAddresses, netip.AddrPortFrom(netip.MustParseAddr("2001:db8::1"), uint16(i)))
	}
	b := mustAppend(t, &tok)
	var back ConnectToken
	if _, err := ParseConnectToken(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(tok, back, cmp.Comparer(addrPortEqual)); diff != "" {
		t.Fatal(diff)
	}
}

func TestPrivateTokenRejects(t *testing.T) {
	v := loadVectors(t)
	valid := []byte(v.ConnectTokenPrivate.Plaintext)
	var tok ConnectTokenPrivate
	if _, err := ParseConnectTokenPrivate(valid[:1023], &tok); !errors.Is(err, ErrPacketSize) {
		t.Errorf("short: %v", err)
	}
	b := bytes.Clone(valid)
	binary.LittleEndian.PutUint32(b[12:], 0)
	if _, err := ParseConnectTokenPrivate(b, &tok); !errors.Is(err, ErrServerAddressCount) {
		t.Errorf("zero addresses: %v", err)
	}
	b = bytes.Clone(valid)
	b[16] = 3
	if _, err := ParseConnectTokenPrivate(b, &tok); !errors.Is(err, ErrAddress) {
		t.Errorf("address type 3: %v", err)
	}
	if _, err := (&ConnectTokenPrivate{}).Append(nil); !errors.Is(err, ErrServerAddressCount) {
		t.Errorf("encode with no address: %v", err)
	}
	sealed := [ConnectTokenPrivateBytes]byte(v.ConnectTokenPrivate.Encrypted)
	nonce := [ConnectTokenNonceBytes]byte(v.Inputs.ConnectTokenNonce)
	sealed[100] ^= 1
	if err := NewTokenCipher(Key(v.Inputs.PrivateKey)).Open(&sealed, uint64(v.Inputs.ProtocolID), v.Inputs.ExpireTimestamp, &nonce, &tok); !errors.Is(err, ErrDecrypt) {
		t.Errorf("tampered: %v", err)
	}
}

func TestGenerateConnectToken(t *testing.T) {
	key := Key{42}
	public := []netip.AddrPort{netip.MustParseAddrPort("203.0.113.5:40000"), netip.MustParseAddrPort("[2001:db8::5]:40000")}
	internal := []netip.AddrPort{netip.MustParseAddrPort("10.0.0.5:40000"), netip.MustParseAddrPort("10.0.0.6:40000")}
	now := time.Unix(1_800_000_000, 0)
	p := &TokenParams{
		ClientID:          77,
		PublicAddresses:   public,
		InternalAddresses: internal,
		Expiry:            1500 * time.Millisecond, // rounds up to 2 s
		Timeout:           -time.Second,            // disabled
		ProtocolID:        testProtocolID,
		PrivateKey:        key,
		UserData:          [UserDataBytes]byte{1, 2, 3},
		Now:               now,
	}
	b, err := GenerateConnectToken(p)
	if err != nil {
		t.Fatal(err)
	}
	var tok ConnectToken
	if _, err := ParseConnectToken(b, &tok); err != nil {
		t.Fatal(err)
	}
	if tok.CreateTimestamp != uint64(now.Unix()) || tok.ExpireTimestamp != uint64(now.Unix())+2 || tok.TimeoutSeconds != -1 {
		t.Fatalf("timestamps %d..%d timeout %d", tok.CreateTimestamp, tok.ExpireTimestamp, tok.TimeoutSeconds)
	}
	if diff := cmp.Diff(public, tok.ServerAddresses, cmp.Comparer(addrPortEqual)); diff != "" {
		t.Fatalf("public part addresses: %s", diff)
	}
	var priv ConnectTokenPrivate
	if err := NewTokenCipher(key).Open(&tok.PrivateData, tok.ProtocolID, tok.ExpireTimestamp, &tok.Nonce, &priv); err != nil {
		t.Fatal(err)
	}
	want := ConnectTokenPrivate{
		ClientID:          77,
		TimeoutSeconds:    -1,
		ServerAddresses:   internal,
		ClientToServerKey: tok.ClientToServerKey,
		ServerToClientKey: tok.ServerToClientKey,
		UserData:          p.UserData,
	}
	if diff := cmp.Diff(want, priv, cmp.Comparer(addrPortEqual)); diff != "" {
		t.Fatalf("private part (-want +got):\n%s", diff)
	}
	if tok.ClientToServerKey == tok.ServerToClientKey || tok.ClientToServerKey == (Key{}) {
		t.Fatal("packet keys are not random")
	}

	// Zero values give the documented defaults.
	b, err = GenerateConnectToken(&TokenParams{PublicAddresses: public[:1], Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseConnectToken(b, &tok); err != nil {
		t.Fatal(err)
	}
	if tok.ExpireTimestamp-tok.CreateTimestamp != 30 || tok.TimeoutSeconds != 5 {
		t.Fatalf("defaults: expiry %d s, timeout %d s", tok.ExpireTimestamp-tok.CreateTimestamp, tok.TimeoutSeconds)
	}
}

func TestGenerateConnectTokenErrors(t *testing.T) {
	one := []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:40000")}
	many := make([]netip.AddrPort, 33)
	for i := range many {
		many[i] = one[0]
	}
	tests := []struct {
		name string
		p    TokenParams
		want error
	}{
		{"no address", TokenParams{}, ErrServerAddressCount},
		{"33 addresses", TokenParams{PublicAddresses: many}, ErrServerAddressCount},
		{"internal count differs", TokenParams{PublicAddresses: one, InternalAddresses: many[:2]}, ErrServerAddressCount},
		{"invalid address", TokenParams{PublicAddresses: []netip.AddrPort{{}}}, ErrAddress},
		{"random source fails", TokenParams{PublicAddresses: one, Rand: &fixedReader{make([]byte, 40)}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := GenerateConnectToken(&tt.p)
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Fatalf("GenerateConnectToken = %v, want %v", err, tt.want)
			}
		})
	}
	if _, err := GenerateConnectToken(&TokenParams{PublicAddresses: one, Expiry: -time.Second}); err == nil {
		t.Fatal("negative expiry accepted")
	}
}

func TestVectorPrivateToken(t *testing.T) {
	v := loadVectors(t)
	tok := v.privateToken(t)

	plain := mustAppend(t, &tok)
	if !bytes.Equal(plain, v.ConnectTokenPrivate.Plaintext) {
		t.Fatalf("plaintext differs:\n got %x\nwant %x", plain, []byte(v.ConnectTokenPrivate.Plaintext))
	}
	var decoded ConnectTokenPrivate
	if _, err := ParseConnectTokenPrivate(v.ConnectTokenPrivate.Plaintext, &decoded); err != nil {
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
	if _, err := ParseConnectToken(v.ConnectToken.Bytes, &tok); err != nil {
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
	if again := mustAppend(t, &tok); !bytes.Equal(again, v.ConnectToken.Bytes) {
		t.Fatal("re-encoded token differs from the vector")
	}
}
