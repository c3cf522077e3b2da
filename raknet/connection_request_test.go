package raknet

import (
	"errors"
	"net/netip"
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
