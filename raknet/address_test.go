package raknet

import (
	"bytes"
	"errors"
	"net/netip"
	"testing"
)

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
			a := Address(tt.addr)
			b := mustAppend(t, &a)
			if got := hexString(b); got != tt.bytes {
				t.Fatalf("Append = %s, want %s", got, tt.bytes)
			}
			if a.Len() != len(b) {
				t.Fatalf("Len = %d, want %d", a.Len(), len(b))
			}
			var got Address
			n, err := ParseAddress(b, &got)
			if err != nil || n != len(b) || got != a {
				t.Fatalf("ParseAddress = %v, %d, %v", got, n, err)
			}
		})
	}

	// The Linux family value, written by the original library on Linux,
	// reads the same as Windows'; unknown families and versions do not.
	linux := mustHex("060a004abc0000000020010db800000000000000000000000100000000")
	var a Address
	if _, err := ParseAddress(linux, &a); err != nil || netip.AddrPort(a) != netip.MustParseAddrPort("[2001:db8::1]:19132") {
		t.Fatalf("family 10: %v, %v", a, err)
	}
	bad := bytes.Clone(linux)
	bad[1] = 2
	if _, err := ParseAddress(bad, &a); !errors.Is(err, ErrBadAddress) {
		t.Fatalf("family 2: err = %v, want ErrBadAddress", err)
	}
	if _, err := ParseAddress([]byte{5, 0, 0, 0, 0, 0, 0}, &a); !errors.Is(err, ErrBadAddress) {
		t.Fatalf("version 5: err = %v, want ErrBadAddress", err)
	}
	// A mapped IPv4 address in IPv6 form reads as plain IPv4 and is
	// written back in IPv4 form.
	a = Address(netip.MustParseAddrPort("[::ffff:10.0.0.1]:5"))
	mapped := mustAppend(t, &a)
	if len(mapped) != addressLen4 {
		t.Fatalf("mapped address written in %d bytes, want %d", len(mapped), addressLen4)
	}
}
