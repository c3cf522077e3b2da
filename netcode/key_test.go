package netcode

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestTokenBase64(t *testing.T) {
	v := loadVectors(t)
	s := EncodeTokenBase64(v.ConnectToken.Bytes)
	b, err := DecodeTokenBase64(s)
	if err != nil || !bytes.Equal(b, v.ConnectToken.Bytes) {
		t.Fatalf("round trip: %v", err)
	}
	if _, err := DecodeTokenBase64(EncodeTokenBase64(make([]byte, 100))); !errors.Is(err, ErrTokenSize) {
		t.Fatalf("short token: %v", err)
	}
	if _, err := DecodeTokenBase64(strings.Repeat("A", 1<<20)); !errors.Is(err, ErrTokenSize) {
		t.Fatalf("huge input: %v", err)
	}
	if _, err := DecodeTokenBase64("!!!!"); err == nil {
		t.Fatal("invalid base64 accepted")
	}
}

func TestKeys(t *testing.T) {
	readme := "60 6a be 6e c9 19 10 ea 9a 65 62 f6 6f 2b 30 e4 43 71 d6 2c d1 99 27 26 6b 3c 60 f4 b7 15 ab a1"
	k, err := ParseKeyHex(readme)
	if err != nil || k[0] != 0x60 || k[31] != 0xa1 {
		t.Fatalf("ParseKeyHex = %x, %v", k, err)
	}
	if _, err := ParseKeyHex("abcd"); !errors.Is(err, ErrKeySize) {
		t.Fatalf("short key: %v", err)
	}
	if _, err := ParseKeyHex(strings.Repeat("zz", 32)); err == nil {
		t.Fatal("non-hex key accepted")
	}
	if a, b := GenerateKey(), GenerateKey(); a == b || a == (Key{}) {
		t.Fatal("GenerateKey is not random")
	}
}
