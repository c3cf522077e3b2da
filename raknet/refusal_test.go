package raknet

import (
	"errors"
	"testing"
)

func TestRefusals(t *testing.T) {
	for _, id := range []byte{IDConnectionAttemptFailed, IDAlreadyConnected, IDNoFreeIncomingConnections, IDConnectionBanned, IDIPRecentlyConnected} {
		r := Refusal{ID: id, GUID: capServerGUID}
		b := mustAppend(t, &r)
		if len(b) != 25 || len(b) != r.Len() {
			t.Fatalf("0x%02x: %d bytes", id, len(b))
		}
		var got Refusal
		if n, err := ParseRefusal(b, &got); err != nil || got != r || n != len(b) {
			t.Fatalf("0x%02x: %+v, %d, %v", id, got, n, err)
		}
	}
	if _, err := ParseRefusal(mustAppend(t, &UnconnectedPing{}), new(Refusal)); !errors.Is(err, ErrWrongID) {
		t.Fatalf("ping as refusal: err = %v", err)
	}
	// An identifier no peer reads as a refusal is not written as one.
	if b, err := (&Refusal{ID: IDUnconnectedPong}).Append(nil); !errors.Is(err, ErrWrongID) || len(b) != 0 {
		t.Fatalf("refusal with id 0x1c: %x, %v", b, err)
	}
	m := IncompatibleProtocolVersion{Protocol: ProtocolBedrock, ServerGUID: 3}
	b := mustAppend(t, &m)
	want := "190b" + hexString(offlineMagic[:]) + "0000000000000003"
	if hexString(b) != want {
		t.Fatalf("incompatible protocol = %s, want %s", hexString(b), want)
	}
	var got IncompatibleProtocolVersion
	if n, err := ParseIncompatibleProtocolVersion(b, &got); err != nil || got != m || n != len(b) {
		t.Fatalf("incompatible protocol: %+v, %d, %v", got, n, err)
	}
	if _, err := ParseIncompatibleProtocolVersion(append(b, 0), &got); !errors.Is(err, ErrBadLength) {
		t.Fatalf("27-byte incompatible protocol: err = %v", err)
	}
}
