package raknet

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCaptureUnconnectedPingPong(t *testing.T) {
	msgs := captureOfflineMessages(t)
	checkCaptured(t, msgs[0], UnconnectedPing{SendTime: 10, ClientGUID: capPingGUID}, ParseUnconnectedPing)
	checkCaptured(t, msgs[1], UnconnectedPong{SendTime: 10, ServerGUID: capServerGUID,
		Data: []byte("RakNet C++ reference echo server"), Encoding: PongRaw}, ParseUnconnectedPong)
}

func TestUnconnectedPingWithoutGUID(t *testing.T) {
	full := mustAppend(t, &UnconnectedPing{SendTime: 3, ClientGUID: 4})
	var p UnconnectedPing
	n, err := ParseUnconnectedPing(full[:unconnectedPingNoGUIDLen], &p)
	checkUsed(t, n, err, unconnectedPingNoGUIDLen)
	if p != (UnconnectedPing{SendTime: 3}) {
		t.Fatalf("ping without GUID: %+v", p)
	}
	// Bytes after the GUID are not part of the ping.
	n, err = ParseUnconnectedPing(append(full, 0xee), &p)
	checkUsed(t, n, err, unconnectedPingLen)
	if p != (UnconnectedPing{SendTime: 3, ClientGUID: 4}) {
		t.Fatalf("ping with a trailing byte: %+v", p)
	}
}

func TestUnconnectedPongEncodings(t *testing.T) {
	motd := []byte("MCPE;Dedicated Server;594;1.20.80;0;10;13253860892328930865;Bedrock level;Survival;1;19132;19133;")
	for _, enc := range []PongEncoding{PongPrefixed, PongRaw} {
		t.Run(enc.String(), func(t *testing.T) {
			p := UnconnectedPong{SendTime: 7, ServerGUID: 99, Data: motd, Encoding: enc}
			b := mustAppend(t, &p)
			if len(b) != p.Len() {
				t.Fatalf("Len() = %d, encoded %d", p.Len(), len(b))
			}
			var got UnconnectedPong
			n, err := ParseUnconnectedPong(b, &got)
			checkUsed(t, n, err, len(b))
			if diff := cmp.Diff(p, got); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
	t.Run("prefixed layout", func(t *testing.T) {
		b := mustAppend(t, &UnconnectedPong{SendTime: 1, ServerGUID: 2, Data: []byte("hi")})
		want := "1c" + "0000000000000001" + "0000000000000002" + hexString(offlineMagic[:]) + "0002" + "6869"
		if hexString(b) != want {
			t.Fatalf("got %s, want %s", hexString(b), want)
		}
	})
	t.Run("empty", func(t *testing.T) {
		for _, enc := range []PongEncoding{PongPrefixed, PongRaw} {
			b := mustAppend(t, &UnconnectedPong{Encoding: enc})
			// Parsing overwrites every field of what it parses into.
			got := UnconnectedPong{SendTime: 9, Data: []byte("old")}
			if _, err := ParseUnconnectedPong(b, &got); err != nil || got.Encoding != enc || len(got.Data) != 0 || got.SendTime != 0 {
				t.Fatalf("%v: got %+v, %v", enc, got, err)
			}
		}
	})
	t.Run("too long", func(t *testing.T) {
		p := UnconnectedPong{Data: make([]byte, MaxPongDataLen-1)}
		if _, err := p.Append(nil); !errors.Is(err, ErrPongDataTooLong) {
			t.Fatalf("prefixed %d bytes: err = %v", len(p.Data), err)
		}
		p.Encoding = PongRaw
		if _, err := p.Append(nil); err != nil {
			t.Fatalf("raw %d bytes: %v", len(p.Data), err)
		}
	})
}

func TestUnconnectedPingPongRejectTruncation(t *testing.T) {
	// Every strict prefix of a captured message that ends inside a required
	// field must be rejected.
	msgs := captureOfflineMessages(t)
	rejectsPrefixes(t, msgs[0], 25, func(b []byte) error { _, err := ParseUnconnectedPing(b, new(UnconnectedPing)); return err })
	rejectsPrefixes(t, msgs[1], 33, func(b []byte) error { _, err := ParseUnconnectedPong(b, new(UnconnectedPong)); return err })
}
