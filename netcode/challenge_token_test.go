package netcode

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestVectorChallengeToken(t *testing.T) {
	v := loadVectors(t)
	tok := ChallengeToken{ClientID: uint64(v.Inputs.ClientID)}
	copy(tok.UserData[:], v.Inputs.UserData)

	if got := mustAppend(t, &tok); !bytes.Equal(got, v.ChallengeToken.Plaintext) {
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
