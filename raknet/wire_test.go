package raknet

import (
	"bytes"
	"encoding/hex"
	"errors"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var addrOpts = cmp.Comparer(func(a, b netip.AddrPort) bool { return a == b })

// The capture's peers: server GUID 0x000660ce784492b0 on 127.0.0.1:19133,
// the pinging client 0x000660ce784c3da5, the connecting client
// 0x000660ce784c8ea5 on 127.0.0.1:49941.
const (
	capServerGUID = 0x000660ce784492b0
	capPingGUID   = 0x000660ce784c3da5
	capClientGUID = 0x000660ce784c8ea5
)

var (
	capServerAddr = netip.MustParseAddrPort("127.0.0.1:19133")
	capClientAddr = netip.MustParseAddrPort("127.0.0.1:49941")
)

func TestCaptureOfflineMessages(t *testing.T) {
	msgs := captureOffline(t)
	if len(msgs) != 6 {
		t.Fatalf("capture has %d offline messages, want 6", len(msgs))
	}

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
	t.Run("request1", func(t *testing.T) {
		got, err := ParseOpenConnectionRequest1(msgs[2])
		if err != nil {
			t.Fatal(err)
		}
		want := OpenConnectionRequest1{Protocol: ProtocolOriginal, MTU: MaxMTU}
		if got != want {
			t.Fatalf("got %+v, want %+v", got, want)
		}
		b, err := got.Append(nil)
		if err != nil {
			t.Fatal(err)
		}
		checkBytes(t, b, msgs[2], got.Len())
	})
	t.Run("reply1", func(t *testing.T) {
		got, err := ParseOpenConnectionReply1(msgs[3])
		if err != nil {
			t.Fatal(err)
		}
		want := OpenConnectionReply1{ServerGUID: capServerGUID, MTU: MaxMTU}
		if got != want {
			t.Fatalf("got %+v, want %+v", got, want)
		}
		checkBytes(t, got.Append(nil), msgs[3], got.Len())
	})
	t.Run("request2", func(t *testing.T) {
		want := OpenConnectionRequest2{ServerAddress: capServerAddr, MTU: MaxMTU, ClientGUID: capClientGUID}
		for _, mode := range []CookieMode{CookieAbsent, CookieDetect} {
			got, err := ParseOpenConnectionRequest2(msgs[4], mode)
			if err != nil {
				t.Fatalf("mode %d: %v", mode, err)
			}
			if got != want {
				t.Fatalf("mode %d: got %+v, want %+v", mode, got, want)
			}
			checkBytes(t, got.Append(nil), msgs[4], got.Len())
		}
		// Expecting a cookie that is not there must fail, not misread.
		if _, err := ParseOpenConnectionRequest2(msgs[4], CookiePresent); err == nil {
			t.Fatal("CookiePresent parsed a request without cookie")
		}
	})
	t.Run("reply2", func(t *testing.T) {
		got, err := ParseOpenConnectionReply2(msgs[5])
		if err != nil {
			t.Fatal(err)
		}
		want := OpenConnectionReply2{ServerGUID: capServerGUID, ClientAddress: capClientAddr, MTU: MaxMTU}
		if got != want {
			t.Fatalf("got %+v, want %+v", got, want)
		}
		checkBytes(t, got.Append(nil), msgs[5], got.Len())
	})
}

func TestCaptureOnlineHandshake(t *testing.T) {
	unassigned := netip.AddrPortFrom(netip.IPv4Unspecified(), 0)
	internal := func(first netip.AddrPort) []netip.AddrPort {
		list := []netip.AddrPort{first}
		for len(list) < 10 {
			list = append(list, unassigned)
		}
		return list
	}

	reqs := captureOnline(t, IDConnectionRequest)
	if len(reqs) != 1 {
		t.Fatalf("found %d connection requests, want 1", len(reqs))
	}
	req, err := ParseConnectionRequest(reqs[0])
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ConnectionRequest{ClientGUID: capClientGUID, Time: 0x15}, req, cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("connection request (-want +got):\n%s", diff)
	}
	checkBytes(t, req.Append(nil), reqs[0], req.Len())

	accs := captureOnline(t, IDConnectionRequestAccepted)
	if len(accs) != 1 {
		t.Fatalf("found %d connection request accepted, want 1", len(accs))
	}
	acc, err := ParseConnectionRequestAccepted(accs[0])
	if err != nil {
		t.Fatal(err)
	}
	wantAcc := ConnectionRequestAccepted{
		ClientAddress:     capClientAddr,
		InternalAddresses: internal(capServerAddr),
		RequestTime:       0x15,
		ReplyTime:         0x221,
	}
	if diff := cmp.Diff(wantAcc, acc, addrOpts); diff != "" {
		t.Fatalf("connection request accepted (-want +got):\n%s", diff)
	}
	checkBytes(t, acc.Append(nil), accs[0], acc.Len())

	nics := captureOnline(t, IDNewIncomingConnection)
	if len(nics) != 1 {
		t.Fatalf("found %d new incoming connection, want 1", len(nics))
	}
	nic, err := ParseNewIncomingConnection(nics[0])
	if err != nil {
		t.Fatal(err)
	}
	wantNIC := NewIncomingConnection{
		ServerAddress:     capServerAddr,
		InternalAddresses: internal(capClientAddr),
		PingTime:          0x221,
		PongTime:          0x1f,
	}
	if diff := cmp.Diff(wantNIC, nic, addrOpts); diff != "" {
		t.Fatalf("new incoming connection (-want +got):\n%s", diff)
	}
	checkBytes(t, nic.Append(nil), nics[0], nic.Len())

	pings := captureOnline(t, IDConnectedPing)
	if len(pings) < 2 {
		t.Fatalf("found %d connected pings, want at least 2", len(pings))
	}
	for _, b := range pings {
		p, err := ParseConnectedPing(b)
		if err != nil {
			t.Fatal(err)
		}
		checkBytes(t, p.Append(nil), b, p.Len())
	}
	pongs := captureOnline(t, IDConnectedPong)
	if len(pongs) < 2 {
		t.Fatalf("found %d connected pongs, want at least 2", len(pongs))
	}
	// The server's pong answers the client's ping sent with the new
	// incoming connection (time 0x1f) at server time 0x236.
	p, err := ParseConnectedPong(pongs[0])
	if err != nil {
		t.Fatal(err)
	}
	if want := (ConnectedPong{PingTime: 0x1f, PongTime: 0x236}); p != want {
		t.Fatalf("first connected pong %+v, want %+v", p, want)
	}
	for _, b := range pongs {
		p, err := ParseConnectedPong(b)
		if err != nil {
			t.Fatal(err)
		}
		checkBytes(t, p.Append(nil), b, p.Len())
	}

	discs := captureOnline(t, IDDisconnectionNotification)
	if len(discs) != 1 {
		t.Fatalf("found %d disconnection notifications, want 1", len(discs))
	}
	if _, err := ParseDisconnectionNotification(discs[0]); err != nil {
		t.Fatal(err)
	}
	checkBytes(t, DisconnectionNotification{}.Append(nil), discs[0], DisconnectionNotification{}.Len())
}

func checkBytes(t *testing.T, got, want []byte, n int) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Fatalf("re-encoded\n%x\nwant\n%x", got, want)
	}
	if n != len(want) {
		t.Fatalf("Len() = %d, want %d", n, len(want))
	}
}

func TestAddresses(t *testing.T) {
	tests := []struct {
		name  string
		addr  netip.AddrPort
		bytes string
	}{
		{"ipv4", netip.MustParseAddrPort("127.0.0.1:19133"), "0480fffffe4abd"},
		{"unassigned", netip.AddrPortFrom(netip.IPv4Unspecified(), 0), "04ffffffff0000"},
		{"ipv6", netip.MustParseAddrPort("[2001:db8::1]:19132"),
			"06" + "1700" + "4abc" + "00000000" + "20010db8000000000000000000000001" + "00000000"},
		{"ipv6 scope", netip.MustParseAddrPort("[fe80::1%3]:1"),
			"06" + "1700" + "0001" + "00000000" + "fe800000000000000000000000000001" + "00000003"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := AppendAddress(nil, tt.addr)
			if got := hexString(b); got != tt.bytes {
				t.Fatalf("AppendAddress = %s, want %s", got, tt.bytes)
			}
			if AddressLen(tt.addr) != len(b) {
				t.Fatalf("AddressLen = %d, want %d", AddressLen(tt.addr), len(b))
			}
			got, n, err := ParseAddress(b)
			if err != nil || n != len(b) || got != tt.addr {
				t.Fatalf("ParseAddress = %v, %d, %v", got, n, err)
			}
		})
	}

	// The Linux family value, written by the original library on Linux,
	// reads the same as Windows'; unknown families and versions do not.
	linux := mustHex("060a004abc0000000020010db800000000000000000000000100000000")
	if a, _, err := ParseAddress(linux); err != nil || a != netip.MustParseAddrPort("[2001:db8::1]:19132") {
		t.Fatalf("family 10: %v, %v", a, err)
	}
	bad := bytes.Clone(linux)
	bad[1] = 2
	if _, _, err := ParseAddress(bad); !errors.Is(err, ErrBadAddress) {
		t.Fatalf("family 2: err = %v, want ErrBadAddress", err)
	}
	if _, _, err := ParseAddress([]byte{5, 0, 0, 0, 0, 0, 0}); !errors.Is(err, ErrBadAddress) {
		t.Fatalf("version 5: err = %v, want ErrBadAddress", err)
	}
	// A mapped IPv4 address in IPv6 form reads as plain IPv4 and is
	// written back in IPv4 form.
	mapped := AppendAddress(nil, netip.MustParseAddrPort("[::ffff:10.0.0.1]:5"))
	if len(mapped) != addressLen4 {
		t.Fatalf("mapped address written in %d bytes, want %d", len(mapped), addressLen4)
	}
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

func TestOpenConnectionCookies(t *testing.T) {
	r1 := OpenConnectionReply1{ServerGUID: 5, HasCookie: true, Cookie: 0xdeadbeef, MTU: 1400}
	b := r1.Append(nil)
	if got, err := ParseOpenConnectionReply1(b); err != nil || got != r1 {
		t.Fatalf("reply1 with cookie: %+v, %v", got, err)
	}
	for _, server := range []netip.AddrPort{capServerAddr, netip.MustParseAddrPort("[2001:db8::7]:19132")} {
		for _, cookie := range []bool{false, true} {
			r2 := OpenConnectionRequest2{HasCookie: cookie, Cookie: 0x01020304, ServerAddress: server, MTU: 1200, ClientGUID: 42}
			if !cookie {
				r2.Cookie = 0
			}
			b := r2.Append(nil)
			if len(b) != r2.Len() {
				t.Fatalf("Len() = %d, encoded %d", r2.Len(), len(b))
			}
			mode := CookieAbsent
			if cookie {
				mode = CookiePresent
			}
			for _, m := range []CookieMode{mode, CookieDetect} {
				got, err := ParseOpenConnectionRequest2(b, m)
				if err != nil || got != r2 {
					t.Fatalf("cookie %v mode %d: %+v, %v", cookie, m, got, err)
				}
			}
		}
	}
	// A libcat challenge flag is refused.
	r2 := OpenConnectionRequest2{HasCookie: true, ServerAddress: capServerAddr}
	b = r2.Append(nil)
	b[21] = 1
	if _, err := ParseOpenConnectionRequest2(b, CookiePresent); !errors.Is(err, ErrSecurityUnsupported) {
		t.Fatalf("challenge flag: err = %v", err)
	}
}

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

func TestInternalAddressCounts(t *testing.T) {
	if InternalAddressCount(ProtocolOriginal) != 10 || InternalAddressCount(ProtocolBedrock) != 20 || InternalAddressCount(10) != 20 {
		t.Fatal("InternalAddressCount disagrees with the original library (10) or Bedrock (20)")
	}
	for _, n := range []int{0, 1, 10, 20} {
		list := make([]netip.AddrPort, n)
		for i := range list {
			list[i] = netip.AddrPortFrom(netip.IPv4Unspecified(), 0)
		}
		if n > 0 {
			list[0] = netip.MustParseAddrPort("[2001:db8::9]:7")
		}
		m := ConnectionRequestAccepted{ClientAddress: capClientAddr, SystemIndex: 3, InternalAddresses: list, RequestTime: -1, ReplyTime: 1 << 40}
		got, err := ParseConnectionRequestAccepted(m.Append(nil))
		if err != nil {
			t.Fatalf("%d addresses: %v", n, err)
		}
		if diff := cmp.Diff(m, got, addrOpts, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("%d addresses (-want +got):\n%s", n, diff)
		}
	}
	m := NewIncomingConnection{ServerAddress: capServerAddr, InternalAddresses: make([]netip.AddrPort, 21)}
	if _, err := ParseNewIncomingConnection(m.Append(nil)); !errors.Is(err, ErrTooManyAddresses) {
		t.Fatalf("21 addresses: err = %v", err)
	}
}

func TestParsersRejectTruncation(t *testing.T) {
	// Every strict prefix of a captured message that ends inside a required
	// field must be rejected by the parser that reads the whole message.
	msgs := captureOffline(t)
	cases := []struct {
		msg  []byte
		need int // bytes a parser requires
		fn   func([]byte) error
	}{
		{msgs[0], 25, func(b []byte) error { _, err := ParseUnconnectedPing(b); return err }},
		{msgs[1], 33, func(b []byte) error { _, err := ParseUnconnectedPong(b); return err }},
		{msgs[2], 18, func(b []byte) error { _, err := ParseOpenConnectionRequest1(b); return err }},
		{msgs[3], len(msgs[3]), func(b []byte) error { _, err := ParseOpenConnectionReply1(b); return err }},
		{msgs[4], len(msgs[4]), func(b []byte) error { _, err := ParseOpenConnectionRequest2(b, CookieAbsent); return err }},
		{msgs[5], len(msgs[5]), func(b []byte) error { _, err := ParseOpenConnectionReply2(b); return err }},
	}
	for _, c := range cases {
		for n := 0; n < c.need; n++ {
			if err := c.fn(c.msg[:n]); err == nil {
				t.Fatalf("message 0x%02x cut to %d bytes parsed", c.msg[0], n)
			}
		}
	}
}

func hexString(b []byte) string { return hex.EncodeToString(b) }

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}
