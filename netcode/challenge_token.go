package netcode

import "encoding/binary"

// ChallengeToken is the plaintext of a challenge token. Its encoding is 300
// bytes, zero padded: Append and ParseChallengeToken handle that plaintext,
// and ChallengeCipher seals it into the 300 bytes that travel, tag
// included.
type ChallengeToken struct {
	ClientID uint64
	UserData [UserDataBytes]byte
}

// Len is the size of the plaintext encoding, ChallengeTokenBytes for every
// token.
func (t *ChallengeToken) Len() int { return ChallengeTokenBytes }

// Append appends the 300-byte plaintext encoding of t to b. Every
// challenge token encodes; the error is always nil.
func (t *ChallengeToken) Append(b []byte) ([]byte, error) {
	b = binary.LittleEndian.AppendUint64(b, t.ClientID)
	b = append(b, t.UserData[:]...)
	return appendZeros(b, ChallengeTokenBytes-8-UserDataBytes), nil
}

// ParseChallengeToken decodes a plaintext challenge token, which must be
// exactly its 300 bytes, into t. Padding is not checked, as in the
// reference.
func ParseChallengeToken(b []byte, t *ChallengeToken) (int, error) {
	if len(b) != ChallengeTokenBytes {
		return 0, ErrPacketSize
	}
	t.ClientID = binary.LittleEndian.Uint64(b)
	copy(t.UserData[:], b[8:])
	return ChallengeTokenBytes, nil
}
