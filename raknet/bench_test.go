package raknet

import (
	"net/netip"
	"testing"
	"time"
)

// The offline hot paths a listener runs for every datagram from strangers
// must not allocate.

func BenchmarkParseUnconnectedPing(b *testing.B) {
	msg := captureOffline(b)[0]
	var p UnconnectedPing
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		if _, err := ParseUnconnectedPing(msg, &p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAnswerPing(b *testing.B) {
	ping := captureOffline(b)[0]
	r := &PongResponse{ServerGUID: 1, Data: []byte("MCPE;Dedicated Server;594;1.20.80;0;10;13253860892328930865;Bedrock level;Survival;1;19132;19133;")}
	out := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if out, err = AnswerPing(out[:0], ping, r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseUnconnectedPong(b *testing.B) {
	msg := captureOffline(b)[1]
	var p UnconnectedPong
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseUnconnectedPong(msg, &p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpenConnectionRequest1(b *testing.B) {
	msg := captureOffline(b)[2]
	out := make([]byte, 0, MaxMTU)
	var r OpenConnectionRequest1
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseOpenConnectionRequest1(msg, &r); err != nil {
			b.Fatal(err)
		}
		var err error
		if out, err = r.Append(out[:0]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpenConnectionRequest2(b *testing.B) {
	msg := captureOffline(b)[4]
	out := make([]byte, 0, 64)
	var r OpenConnectionRequest2
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseOpenConnectionRequest2(msg, CookieDetect, &r); err != nil {
			b.Fatal(err)
		}
		var err error
		if out, err = r.Append(out[:0]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkConnectionRequestAccepted(b *testing.B) {
	msg := captureOnline(b, IDConnectionRequestAccepted)[0]
	var m ConnectionRequestAccepted
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseConnectionRequestAccepted(msg, &m); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPingerRoundTrip(b *testing.B) {
	target := netip.MustParseAddrPort("10.0.0.2:19132")
	p := &pinger{target: target, guid: 1, interval: time.Second}
	now := time.Unix(1000, 0)
	var buf []byte
	pong := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(time.Second)
		buf, _ = p.poll(now, buf[:0])
		r := PongResponse{ServerGUID: 2}
		pong, _ = AnswerPing(pong[:0], buf, &r)
		if _, ok := p.receive(pong, target, now); !ok {
			b.Fatal("pong not matched")
		}
	}
}
