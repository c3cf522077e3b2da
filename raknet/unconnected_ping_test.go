package raknet

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCaptureUnconnectedPingPong(t *testing.T) {
	msgs := captureOfflineMessages(t)
	t.Run("ping", func(t *testing.T) {
		got, err := ParseUnconnectedPing(msgs[0])
		if err != nil {
			t.Fatal(err)
		}
		want := UnconnectedPing{SendTime: 10, ClientGUID: capPingGUID}
		if got != want {
			t.Fatalf("got %+v, want %+v", got, want)
		}
		checkBytes(t, got.Append(nil), msgs[0], got.Len())
	})
	t.Run("pong", func(t *testing.T) {
		got, err := ParseUnconnectedPong(msgs[1])
		if err != nil {
			t.Fatal(err)
		}
		want := UnconnectedPong{SendTime: 10, ServerGUID: capServerGUID,
			Data: []byte("RakNet C++ reference echo server"), Encoding: PongRaw}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("pong (-want +got):\n%s", diff)
		}
		b, err := got.Append(nil)
		if err != nil {
			t.Fatal(err)
		}
		checkBytes(t, b, msgs[1], got.Len())
	})
}

func TestUnconnectedPongEncodings(t *testing.T) {
	motd := []byte("MCPE;Dedicated Server;594;1.20.80;0;10;13253860892328930865;Bedrock level;Survival;1;19132;19133;")
	for _, enc := range []PongEncoding{PongPrefixed, PongRaw} {
		t.Run(enc.String(), func(t *testing.T) {
			p := UnconnectedPong{SendTime: 7, ServerGUID: 99, Data: motd, Encoding: enc}
			b, err := p.Append(nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) != p.Len() {
				t.Fatalf("Len() = %d, encoded %d", p.Len(), len(b))
			}
			got, err := ParseUnconnectedPong(b)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(p, got); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
	t.Run("prefixed layout", func(t *testing.T) {
		p := UnconnectedPong{SendTime: 1, ServerGUID: 2, Data: []byte("hi")}
		b, _ := p.Append(nil)
		want := "1c" + "0000000000000001" + "0000000000000002" + hexString(offlineMagic[:]) + "0002" + "6869"
		if hexString(b) != want {
			t.Fatalf("got %s, want %s", hexString(b), want)
		}
	})
	t.Run("empty", func(t *testing.T) {
		for _, enc := range []PongEncoding{PongPrefixed, PongRaw} {
			p := UnconnectedPong{Encoding: enc}
			b, _ := p.Append(nil)
			got, err := ParseUnconnectedPong(b)
			if err != nil || got.Encoding != enc || len(got.Data) != 0 {
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
	rejectsPrefixes(t, msgs[0], 25, func(b []byte) error { _, err := ParseUnconnectedPing(b); return err })
	rejectsPrefixes(t, msgs[1], 33, func(b []byte) error { _, err := ParseUnconnectedPong(b); return err })
}
