package raknet

import (
	"bytes"
	"encoding/hex"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
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

// captureOfflineMessages returns the capture's six offline messages: ping,
// pong, request 1, reply 1, request 2, reply 2.
func captureOfflineMessages(t *testing.T) [][]byte {
	t.Helper()
	msgs := captureOffline(t)
	if len(msgs) != 6 {
		t.Fatalf("capture has %d offline messages, want 6", len(msgs))
	}
	return msgs
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

func hexString(b []byte) string { return hex.EncodeToString(b) }

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// rejectsPrefixes checks that parse rejects msg cut to any length below
// need, the bytes its required fields take.
func rejectsPrefixes(t *testing.T, msg []byte, need int, parse func([]byte) error) {
	t.Helper()
	for n := 0; n < need; n++ {
		if err := parse(msg[:n]); err == nil {
			t.Fatalf("message 0x%02x cut to %d bytes parsed", msg[0], n)
		}
	}
}
