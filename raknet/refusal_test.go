package raknet

import (
	"errors"
	"testing"
)

func TestRefusals(t *testing.T) {
	for _, id := range []byte{IDConnectionAttemptFailed, IDAlreadyConnected, IDNoFreeIncomingConnections, IDConnectionBanned, IDIPRecentlyConnected} {
		r := Refusal{ID: id, GUID: capServerGUID}
		b := r.Append(nil)
		if len(b) != 25 || len(b) != r.Len() {
			t.Fatalf("0x%02x: %d bytes", id, len(b))
		}
		if got, err := ParseRefusal(b); err != nil || got != r {
			t.Fatalf("0x%02x: %+v, %v", id, got, err)
		}
	}
	ping := UnconnectedPing{}
	if _, err := ParseRefusal(ping.Append(nil)); !errors.Is(err, ErrWrongID) {
		t.Fatalf("ping as refusal: err = %v", err)
	}
	m := IncompatibleProtocolVersion{Protocol: ProtocolBedrock, ServerGUID: 3}
	b := m.Append(nil)
	want := "190b" + hexString(offlineMagic[:]) + "0000000000000003"
	if hexString(b) != want {
		t.Fatalf("incompatible protocol = %s, want %s", hexString(b), want)
	}
	if got, err := ParseIncompatibleProtocolVersion(b); err != nil || got != m {
		t.Fatalf("incompatible protocol: %+v, %v", got, err)
	}
	if _, err := ParseIncompatibleProtocolVersion(append(b, 0)); !errors.Is(err, ErrBadLength) {
		t.Fatalf("27-byte incompatible protocol: err = %v", err)
	}
}
