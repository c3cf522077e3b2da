package raknet

import (
	"errors"
	"net/netip"
	"testing"
)

func TestCaptureOpenConnection(t *testing.T) {
	msgs := captureOfflineMessages(t)
	checkCaptured(t, msgs[2], OpenConnectionRequest1{Protocol: ProtocolOriginal, MTU: MaxMTU}, ParseOpenConnectionRequest1)
	checkCaptured(t, msgs[3], OpenConnectionReply1{ServerGUID: capServerGUID, MTU: MaxMTU}, ParseOpenConnectionReply1)
	request2 := OpenConnectionRequest2{ServerAddress: capServerAddr, MTU: MaxMTU, ClientGUID: capClientGUID}
	for _, mode := range []CookieMode{CookieAbsent, CookieDetect} {
		checkCaptured(t, msgs[4], request2, func(b []byte, r *OpenConnectionRequest2) (int, error) {
			return ParseOpenConnectionRequest2(b, mode, r)
		})
	}
	// Expecting a cookie that is not there must fail, not misread.
	if _, err := ParseOpenConnectionRequest2(msgs[4], CookiePresent, new(OpenConnectionRequest2)); err == nil {
		t.Fatal("CookiePresent parsed a request without cookie")
	}
	checkCaptured(t, msgs[5], OpenConnectionReply2{ServerGUID: capServerGUID, ClientAddress: capClientAddr, MTU: MaxMTU},
		ParseOpenConnectionReply2)
}

func TestOpenConnectionCookies(t *testing.T) {
	r1 := OpenConnectionReply1{ServerGUID: 5, HasCookie: true, Cookie: 0xdeadbeef, MTU: 1400}
	b := mustAppend(t, &r1)
	var got1 OpenConnectionReply1
	if n, err := ParseOpenConnectionReply1(b, &got1); err != nil || got1 != r1 || n != len(b) {
		t.Fatalf("reply1 with cookie: %+v, %d, %v", got1, n, err)
	}
	// A reply without cookie overwrites the cookie of an earlier parse.
	r1 = OpenConnectionReply1{ServerGUID: 5, MTU: 1400}
	if _, err := ParseOpenConnectionReply1(mustAppend(t, &r1), &got1); err != nil || got1 != r1 {
		t.Fatalf("reply1 without cookie: %+v, %v", got1, err)
	}
	for _, server := range []netip.AddrPort{capServerAddr, netip.MustParseAddrPort("[2001:db8::7]:19132")} {
		for _, cookie := range []bool{false, true} {
			r2 := OpenConnectionRequest2{HasCookie: cookie, Cookie: 0x01020304, ServerAddress: server, MTU: 1200, ClientGUID: 42}
			if !cookie {
				r2.Cookie = 0
			}
			b := mustAppend(t, &r2)
			if len(b) != r2.Len() {
				t.Fatalf("Len() = %d, encoded %d", r2.Len(), len(b))
			}
			mode := CookieAbsent
			if cookie {
				mode = CookiePresent
			}
			for _, m := range []CookieMode{mode, CookieDetect} {
				var got OpenConnectionRequest2
				if n, err := ParseOpenConnectionRequest2(b, m, &got); err != nil || got != r2 || n != len(b) {
					t.Fatalf("cookie %v mode %d: %+v, %d, %v", cookie, m, got, n, err)
				}
			}
		}
	}
	// A libcat challenge flag is refused.
	b = mustAppend(t, &OpenConnectionRequest2{HasCookie: true, ServerAddress: capServerAddr})
	b[21] = 1
	if _, err := ParseOpenConnectionRequest2(b, CookiePresent, new(OpenConnectionRequest2)); !errors.Is(err, ErrSecurityUnsupported) {
		t.Fatalf("challenge flag: err = %v", err)
	}
}

func TestOpenConnectionRejectTruncation(t *testing.T) {
	// Every strict prefix of a captured message that ends inside a required
	// field must be rejected.
	msgs := captureOfflineMessages(t)
	rejectsPrefixes(t, msgs[2], 18, func(b []byte) error {
		_, err := ParseOpenConnectionRequest1(b, new(OpenConnectionRequest1))
		return err
	})
	rejectsPrefixes(t, msgs[3], len(msgs[3]), func(b []byte) error {
		_, err := ParseOpenConnectionReply1(b, new(OpenConnectionReply1))
		return err
	})
	rejectsPrefixes(t, msgs[4], len(msgs[4]), func(b []byte) error {
		_, err := ParseOpenConnectionRequest2(b, CookieAbsent, new(OpenConnectionRequest2))
		return err
	})
	rejectsPrefixes(t, msgs[5], len(msgs[5]), func(b []byte) error {
		_, err := ParseOpenConnectionReply2(b, new(OpenConnectionReply2))
		return err
	})
}
