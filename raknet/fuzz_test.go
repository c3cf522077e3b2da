package raknet

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Every parser has a fuzz target. Each checks the contract every wire type
// shares: the parser never panics, uses no more than it was given and
// nothing when it fails, overwrites every field of what it parses into,
// and what it accepts appends to Len() bytes that parse back, whole, to
// the same value.

// checkParse parses b into a zero T and into dirty, a T with every field
// set, and checks that both agree. If b parses, the value must round-trip.
func checkParse[T any, P wirePtr[T]](t *testing.T, b []byte, dirty T, parse func([]byte, *T) (int, error)) {
	t.Helper()
	if x, ok := checkOverwrite(t, b, dirty, parse); ok {
		checkRoundTrip(t, P(&x), parse)
	}
}

// checkOverwrite is the first half of checkParse: it returns what b
// parsed to, if it did.
func checkOverwrite[T any](t *testing.T, b []byte, dirty T, parse func([]byte, *T) (int, error)) (T, bool) {
	t.Helper()
	var x T
	n, err := parse(b, &x)
	n2, err2 := parse(b, &dirty)
	if n != n2 || !errors.Is(err2, err) {
		t.Fatalf("parse into a zero value: %d, %v; into a used one: %d, %v", n, err, n2, err2)
	}
	if err != nil {
		if n != 0 {
			t.Fatalf("parser failed with %v but used %d bytes", err, n)
		}
		return x, false
	}
	if n <= 0 || n > len(b) {
		t.Fatalf("parser used %d of %d bytes", n, len(b))
	}
	if diff := cmp.Diff(x, dirty, wireOpts...); diff != "" {
		t.Fatalf("parse into a used value kept old fields (-zero +used):\n%s", diff)
	}
	return x, true
}

func checkRoundTrip[T any, P wirePtr[T]](t *testing.T, x P, parse func([]byte, *T) (int, error)) {
	t.Helper()
	b, err := x.Append(nil)
	if err != nil {
		t.Fatalf("append %+v: %v", x, err)
	}
	if len(b) != x.Len() {
		t.Fatalf("Len() = %d, appended %d bytes", x.Len(), len(b))
	}
	var y T
	n, err := parse(b, &y)
	if err != nil {
		t.Fatalf("parse of re-encoded %+v: %v\n%x", x, err, b)
	}
	if n != len(b) {
		t.Fatalf("parse of re-encoded %+v used %d of %d bytes", x, n, len(b))
	}
	if diff := cmp.Diff(*x, y, wireOpts...); diff != "" {
		t.Fatalf("round trip (-first +second):\n%s", diff)
	}
}

// seedOffline adds every captured offline message plus hand-made variants
// that reach the branches the capture does not (cookies, IPv6, prefixed
// pong data).
func seedOffline(f *testing.F) {
	for _, b := range captureOffline(f) {
		f.Add(b)
	}
	v6 := netip.MustParseAddrPort("[2001:db8::1%2]:19132")
	f.Add(mustAppend(f, &UnconnectedPong{SendTime: 1, ServerGUID: 2, Data: []byte("MCPE;x;1;1;0;1;2;y;Survival;1;1;1;")}))
	f.Add(mustAppend(f, &OpenConnectionReply1{HasCookie: true, Cookie: 9, MTU: 1200}))
	f.Add(mustAppend(f, &OpenConnectionRequest2{HasCookie: true, Cookie: 9, ServerAddress: v6, MTU: 1200}))
	f.Add(mustAppend(f, &OpenConnectionRequest2{ServerAddress: v6, MTU: 576}))
	f.Add(mustAppend(f, &OpenConnectionReply2{ClientAddress: v6, MTU: 576, Encryption: true}))
	f.Add(mustAppend(f, &Refusal{ID: IDAlreadyConnected, GUID: 1}))
	f.Add(mustAppend(f, &IncompatibleProtocolVersion{Protocol: 11, ServerGUID: 1}))
}

func seedOnline(f *testing.F) {
	for _, b := range captureOnline(f, IDConnectionRequest, IDConnectionRequestAccepted, IDNewIncomingConnection,
		IDConnectedPing, IDConnectedPong, IDDisconnectionNotification) {
		f.Add(b)
	}
	v6 := netip.MustParseAddrPort("[2001:db8::1]:19132")
	list := make([]netip.AddrPort, 20)
	list[0] = v6
	f.Add(mustAppend(f, &ConnectionRequestAccepted{ClientAddress: v6, InternalAddresses: list}))
	f.Add(mustAppend(f, &NewIncomingConnection{ServerAddress: v6, InternalAddresses: list}))
	f.Add(mustAppend(f, &ConnectionRequest{ClientGUID: 1, Time: 2, Password: []byte("pw")}))
}

// Values with every field set, to parse into.
var (
	dirtyAddr  = netip.MustParseAddrPort("[2001:db8::99%7]:9")
	dirtyList  = []netip.AddrPort{dirtyAddr, dirtyAddr, dirtyAddr}
	dirtyBytes = []byte("dirty")
)

func FuzzUnconnectedPing(f *testing.F) {
	seedOffline(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		checkParse(t, b, UnconnectedPing{OpenConnectionsOnly: true, SendTime: 1, ClientGUID: 2}, ParseUnconnectedPing)
	})
}

func FuzzUnconnectedPong(f *testing.F) {
	seedOffline(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		x, ok := checkOverwrite(t, b, UnconnectedPong{SendTime: 1, ServerGUID: 2, Data: dirtyBytes, Encoding: PongRaw}, ParseUnconnectedPong)
		if !ok {
			return
		}
		if x.Len()-unconnectedPongHeaderLen > MaxPongDataLen {
			if _, err := x.Append(nil); !errors.Is(err, ErrPongDataTooLong) {
				t.Fatalf("oversized pong data: err = %v", err)
			}
			return
		}
		checkRoundTrip(t, &x, ParseUnconnectedPong)
	})
}

func FuzzOpenConnectionRequest1(f *testing.F) {
	seedOffline(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		checkParse(t, b, OpenConnectionRequest1{Protocol: 1, MTU: 2}, ParseOpenConnectionRequest1)
	})
}

func FuzzOpenConnectionReply1(f *testing.F) {
	seedOffline(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		checkParse(t, b, OpenConnectionReply1{ServerGUID: 1, HasCookie: true, Cookie: 2, MTU: 3}, ParseOpenConnectionReply1)
	})
}

func FuzzOpenConnectionRequest2(f *testing.F) {
	seedOffline(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, mode := range []CookieMode{CookieDetect, CookieAbsent, CookiePresent} {
			parse := func(b []byte, r *OpenConnectionRequest2) (int, error) {
				return ParseOpenConnectionRequest2(b, mode, r)
			}
			dirty := OpenConnectionRequest2{HasCookie: true, Cookie: 1, ServerAddress: dirtyAddr, MTU: 2, ClientGUID: 3}
			checkParse(t, b, dirty, parse)
		}
	})
}

func FuzzOpenConnectionReply2(f *testing.F) {
	seedOffline(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		checkParse(t, b, OpenConnectionReply2{ServerGUID: 1, ClientAddress: dirtyAddr, MTU: 2, Encryption: true}, ParseOpenConnectionReply2)
	})
}

func FuzzRefusal(f *testing.F) {
	seedOffline(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		checkParse(t, b, Refusal{ID: 0xff, GUID: 1}, ParseRefusal)
	})
}

func FuzzIncompatibleProtocolVersion(f *testing.F) {
	seedOffline(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		checkParse(t, b, IncompatibleProtocolVersion{Protocol: 1, ServerGUID: 2}, ParseIncompatibleProtocolVersion)
	})
}

func FuzzAddress(f *testing.F) {
	f.Add(mustHex("0480fffffe4abd"))
	f.Add(mustHex("060a004abc0000000020010db800000000000000000000000100000000"))
	f.Add(mustHex("0617004abc00000000fe80000000000000000000000000000100000003"))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkParse(t, b, Address(dirtyAddr), ParseAddress)
	})
}

func FuzzConnectionRequest(f *testing.F) {
	seedOnline(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		checkParse(t, b, ConnectionRequest{ClientGUID: 1, Time: 2, Password: dirtyBytes}, ParseConnectionRequest)
	})
}

func FuzzConnectionRequestAccepted(f *testing.F) {
	seedOnline(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		dirty := ConnectionRequestAccepted{ClientAddress: dirtyAddr, SystemIndex: 1,
			InternalAddresses: append([]netip.AddrPort(nil), dirtyList...), RequestTime: 2, ReplyTime: 3}
		checkParse(t, b, dirty, ParseConnectionRequestAccepted)
	})
}

func FuzzNewIncomingConnection(f *testing.F) {
	seedOnline(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		dirty := NewIncomingConnection{ServerAddress: dirtyAddr,
			InternalAddresses: append([]netip.AddrPort(nil), dirtyList...), PingTime: 1, PongTime: 2}
		checkParse(t, b, dirty, ParseNewIncomingConnection)
	})
}

func FuzzConnectedPingPong(f *testing.F) {
	seedOnline(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		checkParse(t, b, ConnectedPing{Time: 1}, ParseConnectedPing)
		checkParse(t, b, ConnectedPong{PingTime: 1, PongTime: 2}, ParseConnectedPong)
		checkParse(t, b, DisconnectionNotification{}, ParseDisconnectionNotification)
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
