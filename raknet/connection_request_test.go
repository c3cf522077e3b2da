package raknet

import (
	"errors"
	"net/netip"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestCaptureOnlineHandshake(t *testing.T) {
	unassigned := netip.AddrPortFrom(netip.IPv4Unspecified(), 0)
	internal := func(first netip.AddrPort) []netip.AddrPort {
		list := []netip.AddrPort{first}
		for len(list) < 10 {
			list = append(list, unassigned)
		}
		return list
	}

	checkCaptured(t, captureOne(t, IDConnectionRequest),
		ConnectionRequest{ClientGUID: capClientGUID, Time: 0x15}, ParseConnectionRequest)
	checkCaptured(t, captureOne(t, IDConnectionRequestAccepted), ConnectionRequestAccepted{
		ClientAddress:     capClientAddr,
		InternalAddresses: internal(capServerAddr),
		RequestTime:       0x15,
		ReplyTime:         0x221,
	}, ParseConnectionRequestAccepted)
	checkCaptured(t, captureOne(t, IDNewIncomingConnection), NewIncomingConnection{
		ServerAddress:     capServerAddr,
		InternalAddresses: internal(capClientAddr),
		PingTime:          0x221,
		PongTime:          0x1f,
	}, ParseNewIncomingConnection)
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
		var got ConnectionRequestAccepted
		if _, err := ParseConnectionRequestAccepted(mustAppend(t, &m), &got); err != nil {
			t.Fatalf("%d addresses: %v", n, err)
		}
		if diff := cmp.Diff(m, got, addrOpts, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("%d addresses (-want +got):\n%s", n, diff)
		}
	}
	m := NewIncomingConnection{ServerAddress: capServerAddr, InternalAddresses: make([]netip.AddrPort, 21)}
	if _, err := m.Append(nil); !errors.Is(err, ErrTooManyAddresses) {
		t.Fatalf("appending 21 addresses: err = %v", err)
	}
	// A peer's 21st address is refused too.
	m.InternalAddresses = m.InternalAddresses[:20]
	b := mustAppend(t, &m)
	b = slices.Insert(b, len(b)-16, b[1:1+addressLen4]...)
	if _, err := ParseNewIncomingConnection(b, new(NewIncomingConnection)); !errors.Is(err, ErrTooManyAddresses) {
		t.Fatalf("parsing 21 addresses: err = %v", err)
	}
}

// TestAddressListReuse checks that parsing into the same message again
// reuses its address list instead of allocating one.
func TestAddressListReuse(t *testing.T) {
	list := make([]netip.AddrPort, 20)
	acc := mustAppend(t, &ConnectionRequestAccepted{ClientAddress: capClientAddr, InternalAddresses: list})
	nic := mustAppend(t, &NewIncomingConnection{ServerAddress: capServerAddr, InternalAddresses: list})
	var m ConnectionRequestAccepted
	var n NewIncomingConnection
	allocs := testing.AllocsPerRun(10, func() {
		if _, err := ParseConnectionRequestAccepted(acc, &m); err != nil {
			t.Fatal(err)
		}
		if _, err := ParseNewIncomingConnection(nic, &n); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per parse into a reused message", allocs)
	}
	if len(m.InternalAddresses) != 20 || len(n.InternalAddresses) != 20 {
		t.Fatalf("parsed %d and %d addresses, want 20", len(m.InternalAddresses), len(n.InternalAddresses))
	}
}
