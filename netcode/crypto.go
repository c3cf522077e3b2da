package netcode

import (
	"crypto/cipher"
	"encoding/binary"

	"golang.org/x/crypto/chacha20poly1305"
)

// PacketCipher seals and opens encrypted packets (types 1 to 6) under one
// packet key and protocol id. Build one per key and keep it: the AEAD state
// is set up once, and the nonce and associated data live in the cipher so
// the packet path does not allocate. A PacketCipher is not safe for use by
// several goroutines at once.
type PacketCipher struct {
	aead  cipher.AEAD
	ad    [packetAssociatedDataBytes]byte // version info, protocol id, prefix byte
	nonce [12]byte
}

// NewPacketCipher returns a cipher for packets under key and protocolID.
func NewPacketCipher(key Key, protocolID uint64) *PacketCipher {
	aead, err := chacha20poly1305.New(key[:])
	if err != nil {
		panic("netcode: chacha20poly1305.New rejected a 32-byte key: " + err.Error())
	}
	c := &PacketCipher{aead: aead}
	copy(c.ad[:], VersionInfo)
	binary.LittleEndian.PutUint64(c.ad[VersionInfoBytes:], protocolID)
	return c
}

// sealInPlace encrypts b[start:] in place and appends the tag. The caller
// has made room for the tag in cap(b), so the result shares b's array.
func (c *PacketCipher) sealInPlace(b []byte, start int, prefix byte, seq uint64) []byte {
	c.ad[packetAssociatedDataBytes-1] = prefix
	nonce96(&c.nonce, seq)
	sealed := c.aead.Seal(b[start:start], c.nonce[:], b[start:], c.ad[:])
	return b[:start+len(sealed)]
}

// openInPlace authenticates and decrypts b[start:] in place and returns the
// plaintext, which aliases b.
func (c *PacketCipher) openInPlace(b []byte, start int, prefix byte, seq uint64) ([]byte, error) {
	c.ad[packetAssociatedDataBytes-1] = prefix
	nonce96(&c.nonce, seq)
	plain, err := c.aead.Open(b[start:start], c.nonce[:], b[start:], c.ad[:])
	if err != nil {
		return nil, ErrDecrypt
	}
	return plain, nil
}

// TokenCipher seals and opens the private part of connect tokens with
// XChaCha20-Poly1305 under the private key shared by the backend and the
// servers. Build one per private key. It is not safe for use by several
// goroutines at once.
type TokenCipher struct {
	aead cipher.AEAD
	ad   [tokenAssociatedDataBytes]byte // version info, protocol id, expire timestamp
	buf  [ConnectTokenPrivateBytes]byte
}

// NewTokenCipher returns a cipher for private connect tokens under key.
func NewTokenCipher(privateKey Key) *TokenCipher {
	aead, err := chacha20poly1305.NewX(privateKey[:])
	if err != nil {
		panic("netcode: chacha20poly1305.NewX rejected a 32-byte key: " + err.Error())
	}
	c := &TokenCipher{aead: aead}
	copy(c.ad[:], VersionInfo)
	return c
}

func (c *TokenCipher) setAD(protocolID, expire uint64) {
	binary.LittleEndian.PutUint64(c.ad[VersionInfoBytes:], protocolID)
	binary.LittleEndian.PutUint64(c.ad[VersionInfoBytes+8:], expire)
}

// Seal encodes t and encrypts it: the first 1008 bytes of the 1024-byte
// plaintext are encrypted and the 16-byte tag fills the last 16. The
// associated data binds the token to protocolID and expire.
func (c *TokenCipher) Seal(t *ConnectTokenPrivate, protocolID, expire uint64, nonce *[ConnectTokenNonceBytes]byte) ([ConnectTokenPrivateBytes]byte, error) {
	var out [ConnectTokenPrivateBytes]byte
	if _, err := t.Append(out[:0]); err != nil {
		return out, err
	}
	c.setAD(protocolID, expire)
	c.aead.Seal(out[:0], nonce[:], out[:ConnectTokenPrivateBytes-MACBytes], c.ad[:])
	return out, nil
}

// Open decrypts a sealed private token and decodes it into t. The sealed
// bytes are not modified.
func (c *TokenCipher) Open(sealed *[ConnectTokenPrivateBytes]byte, protocolID, expire uint64, nonce *[ConnectTokenNonceBytes]byte, t *ConnectTokenPrivate) error {
	c.setAD(protocolID, expire)
	plain, err := c.aead.Open(c.buf[:0], nonce[:], sealed[:], c.ad[:])
	if err != nil {
		return ErrDecrypt
	}
	// The plaintext is 1008 bytes; the decoder wants the full padded 1024.
	clear(c.buf[len(plain):])
	_, err = ParseConnectTokenPrivate(c.buf[:], t)
	return err
}

// ChallengeCipher seals and opens challenge tokens with ChaCha20-Poly1305
// IETF, no associated data, and the nonce [00 00 00 00][sequence u64 LE]. A
// server uses one under a random key chosen at each start. It is not safe
// for use by several goroutines at once.
type ChallengeCipher struct {
	aead  cipher.AEAD
	nonce [12]byte
	buf   [ChallengeTokenBytes]byte
}

// NewChallengeCipher returns a cipher for challenge tokens under key.
func NewChallengeCipher(key Key) *ChallengeCipher {
	aead, err := chacha20poly1305.New(key[:])
	if err != nil {
		panic("netcode: chacha20poly1305.New rejected a 32-byte key: " + err.Error())
	}
	return &ChallengeCipher{aead: aead}
}

// Seal encodes t into 300 bytes and encrypts the first 284 of them, with
// the tag in the last 16.
func (c *ChallengeCipher) Seal(t *ChallengeToken, seq uint64) [ChallengeTokenBytes]byte {
	var out [ChallengeTokenBytes]byte
	t.Append(out[:0]) // writes into out; every challenge token encodes
	nonce96(&c.nonce, seq)
	c.aead.Seal(out[:0], c.nonce[:], out[:ChallengeTokenBytes-MACBytes], nil)
	return out
}

// Open decrypts a sealed challenge token and decodes it into t.
func (c *ChallengeCipher) Open(sealed *[ChallengeTokenBytes]byte, seq uint64, t *ChallengeToken) error {
	nonce96(&c.nonce, seq)
	plain, err := c.aead.Open(c.buf[:0], c.nonce[:], sealed[:], nil)
	if err != nil {
		return ErrDecrypt
	}
	clear(c.buf[len(plain):])
	_, err = ParseChallengeToken(c.buf[:], t)
	return err
}
