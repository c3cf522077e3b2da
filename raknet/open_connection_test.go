package raknet

import (
	"errors"
	"net/netip"
	"testing"
)

func TestCaptureOpenConnection(t *testing.T) {
	msgs := captureOfflineMessages(t)
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

func TestOpenConnectionRejectTruncation(t *testing.T) {
	// Every strict prefix of a captured message that ends inside a required
	// field must be rejected.
	msgs := captureOfflineMessages(t)
	rejectsPrefixes(t, msgs[2], 18, func(b []byte) error { _, err := ParseOpenConnectionRequest1(b); return err })
	rejectsPrefixes(t, msgs[3], len(msgs[3]), func(b []byte) error { _, err := ParseOpenConnectionReply1(b); return err })
	rejectsPrefixes(t, msgs[4], len(msgs[4]), func(b []byte) error { _, err := ParseOpenConnectionRequest2(b, CookieAbsent); return err })
	rejectsPrefixes(t, msgs[5], len(msgs[5]), func(b []byte) error { _, err := ParseOpenConnectionReply2(b); return err })
}
