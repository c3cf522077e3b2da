package raknet

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// Every parser has a fuzz target. Each checks that the parser never
// panics and, when it accepts an input, that appending the result yields
// Len() bytes which parse back to the same value.

// wireMessage is the Append/Len half of a message type.
type wireMessage interface{ Len() int }

func checkRoundTrip[T wireMessage](t *testing.T, x T, enc func(T) ([]byte, error), parse func([]byte) (T, error)) {
	t.Helper()
	b, err := enc(x)
	if err != nil {
		t.Fatalf("append %+v: %v", x, err)
	}
	if len(b) != x.Len() {
		t.Fatalf("Len() = %d, appended %d bytes", x.Len(), len(b))
	}
	y, err := parse(b)
	if err != nil {
		t.Fatalf("parse of re-encoded %+v: %v\n%x", x, err, b)
	}
	if diff := cmp.Diff(x, y, addrOpts, cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("round trip (-first +second):\n%s", diff)
	}
}

func ok[T any](f func(*T, []byte) []byte) func(*T) ([]byte, error) {
	return func(x *T) ([]byte, error) { return f(x, nil), nil }
}

// seedOffline adds every captured offline message plus hand-made variants
// that reach the branches the capture does not (cookies, IPv6, prefixed
// pong data).
func seedOffline(f *testing.F) {
	for _, b := range captureOffline(f) {
		f.Add(b)
	}
	v6 := netip.MustParseAddrPort("[2001:db8::1%2]:19132")
	pong := UnconnectedPong{SendTime: 1, ServerGUID: 2, Data: []byte("MCPE;x;1;1;0;1;2;y;Survival;1;1;1;")}
	b, _ := pong.Append(nil)
	f.Add(b)
	f.Add((&OpenConnectionReply1{HasCookie: true, Cookie: 9, MTU: 1200}).Append(nil))
	f.Add((&OpenConnectionRequest2{HasCookie: true, Cookie: 9, ServerAddress: v6, MTU: 1200}).Append(nil))
	f.Add((&OpenConnectionRequest2{ServerAddress: v6, MTU: 576}).Append(nil))
	f.Add((&OpenConnectionReply2{ClientAddress: v6, MTU: 576, Encryption: true}).Append(nil))
	f.Add((&Refusal{ID: IDAlreadyConnected, GUID: 1}).Append(nil))
	f.Add((&IncompatibleProtocolVersion{Protocol: 11, ServerGUID: 1}).Append(nil))
}

func seedOnline(f *testing.F) {
	for _, b := range captureOnline(f, IDConnectionRequest, IDConnectionRequestAccepted, IDNewIncomingConnection,
		IDConnectedPing, IDConnectedPong, IDDisconnectionNotification) {
		f.Add(b)
	}
	v6 := netip.MustParseAddrPort("[2001:db8::1]:19132")
	list := make([]netip.AddrPort, 20)
	list[0] = v6
	f.Add((&ConnectionRequestAccepted{ClientAddress: v6, InternalAddresses: list}).Append(nil))
	f.Add((&NewIncomingConnection{ServerAddress: v6, InternalAddresses: list}).Append(nil))
	f.Add((&ConnectionRequest{ClientGUID: 1, Time: 2, Password: []byte("pw")}).Append(nil))
}

func FuzzUnconnectedPing(f *testing.F) {
	seedOffline(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := ParseUnconnectedPing(b)
		if err == nil {
			checkRoundTrip(t, &x, ok((*UnconnectedPing).Append), ptr(ParseUnconnectedPing))
		}
	})
}

func FuzzUnconnectedPong(f *testing.F) {
	seedOffline(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := ParseUnconnectedPong(b)
		if err != nil {
			return
		}
		if x.Len()-unconnectedPongHeaderLen > MaxPongDataLen {
			if _, err := x.Append(nil); !errors.Is(err, ErrPongDataTooLong) {
				t.Fatalf("oversized pong data: err = %v", err)
			}
			return
		}
		checkRoundTrip(t, &x, fallible((*UnconnectedPong).Append), ptr(ParseUnconnectedPong))
	})
}

func FuzzOpenConnectionRequest1(f *testing.F) {
	seedOffline(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := ParseOpenConnectionRequest1(b)
		if err == nil {
			checkRoundTrip(t, &x, fallible((*OpenConnectionRequest1).Append), ptr(ParseOpenConnectionRequest1))
		}
	})
}

func FuzzOpenConnectionReply1(f *testing.F) {
	seedOffline(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := ParseOpenConnectionReply1(b)
		if err == nil {
			checkRoundTrip(t, &x, ok((*OpenConnectionReply1).Append), ptr(ParseOpenConnectionReply1))
		}
	})
}

func FuzzOpenConnectionRequest2(f *testing.F) {
	seedOffline(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, mode := range []CookieMode{CookieDetect, CookieAbsent, CookiePresent} {
			x, err := ParseOpenConnectionRequest2(b, mode)
			if err != nil {
				continue
			}
			parse := func(b []byte) (*OpenConnectionRequest2, error) {
				y, err := ParseOpenConnectionRequest2(b, mode)
				return &y, err
			}
			checkRoundTrip(t, &x, ok((*OpenConnectionRequest2).Append), parse)
		}
	})
}

func FuzzOpenConnectionReply2(f *testing.F) {
	seedOffline(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := ParseOpenConnectionReply2(b)
		if err == nil {
			checkRoundTrip(t, &x, ok((*OpenConnectionReply2).Append), ptr(ParseOpenConnectionReply2))
		}
	})
}

func FuzzRefusal(f *testing.F) {
	seedOffline(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := ParseRefusal(b)
		if err == nil {
			checkRoundTrip(t, &x, ok((*Refusal).Append), ptr(ParseRefusal))
		}
	})
}

func FuzzIncompatibleProtocolVersion(f *testing.F) {
	seedOffline(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := ParseIncompatibleProtocolVersion(b)
		if err == nil {
			checkRoundTrip(t, &x, ok((*IncompatibleProtocolVersion).Append), ptr(ParseIncompatibleProtocolVersion))
		}
	})
}

func FuzzAddress(f *testing.F) {
	f.Add(mustHex("0480fffffe4abd"))
	f.Add(mustHex("060a004abc0000000020010db800000000000000000000000100000000"))
	f.Add(mustHex("0617004abc00000000fe80000000000000000000000000000100000003"))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, n, err := ParseAddress(b)
		if err != nil {
			return
		}
		if n > len(b) || n != AddressLen(a) {
			t.Fatalf("used %d of %d bytes, AddressLen %d", n, len(b), AddressLen(a))
		}
		enc := AppendAddress(nil, a)
		if len(enc) != n {
			t.Fatalf("re-encoded %d bytes, parsed %d", len(enc), n)
		}
		a2, _, err := ParseAddress(enc)
		if err != nil || a2 != a {
			t.Fatalf("round trip %v -> %v, %v", a, a2, err)
		}
	})
}

func FuzzConnectionRequest(f *testing.F) {
	seedOnline(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := ParseConnectionRequest(b)
		if err == nil {
			checkRoundTrip(t, &x, ok((*ConnectionRequest).Append), ptr(ParseConnectionRequest))
		}
	})
}

func FuzzConnectionRequestAccepted(f *testing.F) {
	seedOnline(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := ParseConnectionRequestAccepted(b)
		if err == nil {
			checkRoundTrip(t, &x, ok((*ConnectionRequestAccepted).Append), ptr(ParseConnectionRequestAccepted))
		}
	})
}

func FuzzNewIncomingConnection(f *testing.F) {
	seedOnline(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := ParseNewIncomingConnection(b)
		if err == nil {
			checkRoundTrip(t, &x, ok((*NewIncomingConnection).Append), ptr(ParseNewIncomingConnection))
		}
	})
}

func FuzzConnectedPingPong(f *testing.F) {
	seedOnline(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		if x, err := ParseConnectedPing(b); err == nil {
			checkRoundTrip(t, &x, ok((*ConnectedPing).Append), ptr(ParseConnectedPing))
		}
		if x, err := ParseConnectedPong(b); err == nil {
			checkRoundTrip(t, &x, ok((*ConnectedPong).Append), ptr(ParseConnectedPong))
		}
		if x, err := ParseDisconnectionNotification(b); err == nil {
			checkRoundTrip(t, &x, ok((*DisconnectionNotification).Append), ptr(ParseDisconnectionNotification))
		}
	})
}

func FuzzBedrockMOTD(f *testing.F) {
	f.Add([]byte("MCPE;Dedicated Server;594;1.20.80;0;10;13253860892328930865;Bedrock level;Survival;1;19132;19133;"))
	f.Add([]byte("MCPE;A server;390;1.14.60;3;20"))
	f.Add([]byte("MCEE;x;1;1;0;1;-5;"))
	f.Add([]byte("RakNet C++ reference echo server"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseBedrockMOTD(b)
		if err != nil {
			return
		}
		enc, err := m.AppendText(nil)
		if err != nil {
			t.Fatalf("AppendText(%+v): %v", m, err)
		}
		m2, err := ParseBedrockMOTD(enc)
		if err != nil || m2 != m {
			t.Fatalf("round trip %+v -> %+v, %v", m, m2, err)
		}
	})
}

func fallible[T any](f func(*T, []byte) ([]byte, error)) func(*T) ([]byte, error) {
	return func(x *T) ([]byte, error) { return f(x, nil) }
}

// ptr adapts a parser returning a value to one returning a pointer, so
// that checkRoundTrip can call pointer-receiver methods.
func ptr[T any](parse func([]byte) (T, error)) func([]byte) (*T, error) {
	return func(b []byte) (*T, error) {
		x, err := parse(b)
		return &x, err
	}
}
