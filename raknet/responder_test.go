package raknet

import (
	"errors"
	"testing"
)

func TestAnswerPing(t *testing.T) {
	pb := mustAppend(t, &UnconnectedPing{SendTime: 1234, ClientGUID: 8})
	for _, enc := range []PongEncoding{PongPrefixed, PongRaw} {
		r := &PongResponse{ServerGUID: 99, Data: []byte("MCPE;hello;"), Encoding: enc}
		out, err := AnswerPing(nil, pb, r)
		if err != nil {
			t.Fatal(err)
		}
		var pong UnconnectedPong
		if _, err := ParseUnconnectedPong(out, &pong); err != nil {
			t.Fatal(err)
		}
		if pong.SendTime != 1234 || pong.ServerGUID != 99 || string(pong.Data) != "MCPE;hello;" || pong.Encoding != enc {
			t.Fatalf("%v: pong %+v", enc, pong)
		}
		// No bigger than the header and data require.
		want := unconnectedPongHeaderLen + len(r.Data)
		if enc == PongPrefixed {
			want += 2
		}
		if len(out) != want {
			t.Fatalf("%v: pong is %d bytes, want %d", enc, len(out), want)
		}
	}

	r := &PongResponse{ServerGUID: 1, NotAccepting: true}
	if out, err := AnswerPing(nil, pb, r); err != nil || len(out) == 0 {
		t.Fatalf("0x01 ping while not accepting: %x, %v", out, err)
	}
	open := mustAppend(t, &UnconnectedPing{OpenConnectionsOnly: true})
	if out, err := AnswerPing(nil, open, r); !errors.Is(err, ErrNotAccepting) || len(out) != 0 {
		t.Fatalf("0x02 ping while not accepting: %x, %v", out, err)
	}
	if out, err := AnswerPing(nil, []byte{IDOpenConnectionRequest1}, r); !errors.Is(err, ErrWrongID) || len(out) != 0 {
		t.Fatalf("non-ping: %x, %v", out, err)
	}
	big := &PongResponse{Data: make([]byte, MaxPongDataLen)}
	if _, err := AnswerPing(nil, pb, big); !errors.Is(err, ErrPongDataTooLong) {
		t.Fatalf("oversized data: err = %v", err)
	}
	big.Encoding = PongRaw
	out, err := AnswerPing(nil, pb, big)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) > 432 {
		t.Fatalf("largest pong is %d bytes, documented 432", len(out))
	}
}
