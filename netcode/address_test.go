package netcode

import (
	"bytes"
	"errors"
	"net/netip"
	"testing"
)

func TestAddressEncoding(t *testing.T) {
	tests := []struct {
		addr string
		wire []byte
	}{
		{"127.0.0.1:40000", []byte{1, 127, 0, 0, 1, 0x40, 0x9c}},
		{"10.20.30.40:50000", []byte{1, 10, 20, 30, 40, 0x50, 0xc3}},
		{"[::1]:40001", []byte{2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0x41, 0x9c}},
		// Each group is a little-endian u16.
		{"[2001:db8::ff00:42:8329]:1", []byte{2, 0x01, 0x20, 0xb8, 0x0d, 0, 0, 0, 0, 0, 0, 0x00, 0xff, 0x42, 0x00, 0x29, 0x83, 1, 0}},
		// A dual-stack socket reports IPv4 peers as mapped IPv6: it stays IPv6.
		{"[::ffff:1.2.3.4]:7", []byte{2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0x02, 0x01, 0x04, 0x03, 7, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			a := netip.MustParseAddrPort(tt.addr)
			b, err := appendAddress(nil, a)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b, tt.wire) {
				t.Fatalf("encoding %x, want %x", b, tt.wire)
			}
			if addressLen(a) != len(tt.wire) {
				t.Fatalf("addressLen = %d, want %d", addressLen(a), len(tt.wire))
			}
			got, n, err := parseAddress(append(bytes.Clone(tt.wire), 0xee))
			if err != nil || n != len(tt.wire) || got != a {
				t.Fatalf("parseAddress = %v, %d, %v", got, n, err)
			}
		})
	}
}

func TestAddressRejects(t *testing.T) {
	for _, b := range [][]byte{
		nil,
		{0, 127, 0, 0, 1, 0, 0},
		{3, 127, 0, 0, 1, 0, 0},
		{255},
		{1, 127, 0, 0, 1, 0},
		{2, 0, 0, 0},
	} {
		if _, _, err := parseAddress(b); !errors.Is(err, ErrAddress) {
			t.Errorf("parseAddress(%x) = %v, want ErrAddress", b, err)
		}
	}
	if _, err := appendAddress(nil, netip.AddrPort{}); !errors.Is(err, ErrAddress) {
		t.Errorf("appendAddress(zero) = %v, want ErrAddress", err)
	}
}

func TestSameAddress(t *testing.T) {
	a := netip.MustParseAddrPort("1.2.3.4:5")
	if !sameAddress(a, netip.MustParseAddrPort("[::ffff:1.2.3.4]:5")) {
		t.Error("mapped IPv6 differs from IPv4")
	}
	if sameAddress(a, netip.MustParseAddrPort("1.2.3.4:6")) {
		t.Error("port ignored")
	}
	if !sameAddress(netip.MustParseAddrPort("[fe80::1%eth0]:5"), netip.MustParseAddrPort("[fe80::1]:5")) {
		t.Error("zone not ignored")
	}
}
