package transport

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestUDPDSCPOnTheWire checks that an IPv4 datagram from a socket
// configured with DSCP 46 arrives carrying TOS byte 0xb8, as the receiver's
// IP_RECVTOS control message reports it, from an IPv4 socket and from a
// dual-stack one.
func TestUDPDSCPOnTheWire(t *testing.T) {
	t.Run("IPv4", func(t *testing.T) { testDSCPOnTheWire(t, "udp4", "127.0.0.1:0") })
	t.Run("DualStack", func(t *testing.T) {
		skipWithoutIPv6(t)
		testDSCPOnTheWire(t, "udp", "[::]:0")
	})
}

func testDSCPOnTheWire(t *testing.T, network, address string) {
	sender := listenUDP(t, network, address, UDPConfig{DSCP: 46})
	receiver := listenUDP(t, "udp4", "127.0.0.1:0", UDPConfig{})
	rc, err := receiver.UDP().SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var sockErr error
	rc.Control(func(fd uintptr) {
		sockErr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_RECVTOS, 1)
	})
	if sockErr != nil {
		t.Fatalf("IP_RECVTOS: %v", sockErr)
	}
	if err := sender.WriteTo([]byte("ef"), receiver.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	receiver.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf, oob := make([]byte, 16), make([]byte, 64)
	_, oobn, _, _, err := receiver.UDP().ReadMsgUDPAddrPort(buf, oob)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if m.Header.Level == unix.IPPROTO_IP && m.Header.Type == unix.IP_TOS && len(m.Data) > 0 {
			if m.Data[0] != 46<<2 {
				t.Fatalf("received TOS %#x, want %#x", m.Data[0], 46<<2)
			}
			return
		}
	}
	t.Fatal("no IP_TOS control message received")
}
