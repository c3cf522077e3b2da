package netcode

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// Key is a 32-byte symmetric key: the private key shared by the backend and
// the servers, or one of the per-connection packet keys.
type Key [KeyBytes]byte

// GenerateKey returns a new random key from crypto/rand.
func GenerateKey() Key {
	var k Key
	rand.Read(k[:]) // never fails since Go 1.24; it crashes the program instead
	return k
}

// ParseKeyHex decodes a key written as 64 hex digits. Spaces are ignored,
// so the byte-per-group form of the README test key is accepted too.
func ParseKeyHex(s string) (Key, error) {
	var k Key
	s = strings.ReplaceAll(s, " ", "")
	if hex.DecodedLen(len(s)) != KeyBytes {
		return k, ErrKeySize
	}
	if _, err := hex.Decode(k[:], []byte(s)); err != nil {
		return k, err
	}
	return k, nil
}

// EncodeTokenBase64 encodes a connect token (or any bytes) with standard,
// padded base64, for handing tokens to clients over a REST API.
func EncodeTokenBase64(token []byte) string {
	return base64.StdEncoding.EncodeToString(token)
}

// DecodeTokenBase64 decodes a connect token encoded by EncodeTokenBase64 and
// checks that it is ConnectTokenBytes long.
func DecodeTokenBase64(s string) ([]byte, error) {
	if base64.StdEncoding.DecodedLen(len(s)) > ConnectTokenBytes+2 {
		return nil, ErrTokenSize // refuse before allocating for a huge input
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, err
	}
	if len(b) != ConnectTokenBytes {
		return nil, ErrTokenSize
	}
	return b, nil
}
