package netcode

import "encoding/binary"

// ChallengeToken is the plaintext of a challenge token. Its encoding is 300
// bytes, zero padded; ChallengeCipher encrypts it.
type ChallengeToken struct {
	ClientID uint64
	UserData [UserDataBytes]byte
}

// AppendBinary appends the 300-byte plaintext encoding of t to b.
func (t *ChallengeToken) AppendBinary(b []byte) []byte {
	b = binary.LittleEndian.AppendUint64(b, t.ClientID)
	b = append(b, t.UserData[:]...)
	return appendZeros(b, ChallengeTokenBytes-8-UserDataBytes)
}

// UnmarshalBinary decodes a 300-byte plaintext challenge token.
func (t *ChallengeToken) UnmarshalBinary(data []byte) error {
	if len(data) != ChallengeTokenBytes {
		return ErrPacketSize
	}
	t.ClientID = binary.LittleEndian.Uint64(data)
	copy(t.UserData[:], data[8:])
	return nil
}
