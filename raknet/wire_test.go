package raknet

import (
	"bytes"
	"encoding/hex"
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

// wirePtr is a pointer to a wire type T.
type wirePtr[T any] interface {
	*T
	appender
}

var wireOpts = []cmp.Option{
	addrOpts,
	cmp.Comparer(func(a, b Address) bool { return a == b }),
	cmpopts.EquateEmpty(),
}

// captureOne returns the capture's only online message with identifier id.
func captureOne(t *testing.T, id byte) []byte {
	t.Helper()
	msgs := captureOnline(t, id)
	if len(msgs) != 1 {
		t.Fatalf("found %d messages 0x%02x in the capture, want 1", len(msgs), id)
	}
	return msgs[0]
}

// checkCaptured checks that the captured message b parses, whole, into
// want and encodes back to b.
func checkCaptured[T any, P wirePtr[T]](t *testing.T, b []byte, want T, parse func([]byte, *T) (int, error)) {
	t.Helper()
	var got T
	n, err := parse(b, &got)
	checkUsed(t, n, err, len(b))
	if diff := cmp.Diff(want, got, wireOpts...); diff != "" {
		t.Fatalf("0x%02x parsed (-want +got):\n%s", b[0], diff)
	}
	checkEncoding(t, P(&got), b)
}

// checkEncoding checks that x encodes to want, in x.Len() bytes.
func checkEncoding(t *testing.T, x appender, want []byte) {
	t.Helper()
	got := mustAppend(t, x)
	if !bytes.Equal(got, want) {
		t.Fatalf("re-encoded\n%x\nwant\n%x", got, want)
	}
	if n := x.Len(); n != len(want) {
		t.Fatalf("Len() = %d, want %d", n, len(want))
	}
}

// checkUsed checks what a parser reported it used.
func checkUsed(t *testing.T, n int, err error, want int) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if n != want {
		t.Fatalf("parser used %d bytes, want %d", n, want)
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

// appender is the encoding half of every wire type.
type appender interface {
	Append(b []byte) ([]byte, error)
	Len() int
}

// mustAppend encodes x into a new slice, failing the test if it cannot.
func mustAppend(tb testing.TB, x appender) []byte {
	tb.Helper()
	b, err := x.Append(nil)
	if err != nil {
		tb.Fatalf("append %+v: %v", x, err)
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

// TestParsersDoNotAllocate checks the promise every parser makes, on the
// captured messages, parsing into values that are reused.
func TestParsersDoNotAllocate(t *testing.T) {
	off := captureOfflineMessages(t)
	acc := captureOnline(t, IDConnectionRequestAccepted)[0]
	nic := captureOnline(t, IDNewIncomingConnection)[0]
	req := captureOnline(t, IDConnectionRequest)[0]
	var (
		ping UnconnectedPing
		pong UnconnectedPong
		r1   OpenConnectionRequest1
		p1   OpenConnectionReply1
		r2   OpenConnectionRequest2
		p2   OpenConnectionReply2
		cr   ConnectionRequest
		cra  ConnectionRequestAccepted
		ni   NewIncomingConnection
		a    Address
	)
	parses := []func() error{
		func() error { _, err := ParseUnconnectedPing(off[0], &ping); return err },
		func() error { _, err := ParseUnconnectedPong(off[1], &pong); return err },
		func() error { _, err := ParseOpenConnectionRequest1(off[2], &r1); return err },
		func() error { _, err := ParseOpenConnectionReply1(off[3], &p1); return err },
		func() error { _, err := ParseOpenConnectionRequest2(off[4], CookieDetect, &r2); return err },
		func() error { _, err := ParseOpenConnectionReply2(off[5], &p2); return err },
		func() error { _, err := ParseConnectionRequest(req, &cr); return err },
		func() error { _, err := ParseConnectionRequestAccepted(acc, &cra); return err },
		func() error { _, err := ParseNewIncomingConnection(nic, &ni); return err },
		func() error { _, err := ParseAddress(acc[1:], &a); return err },
	}
	for i, parse := range parses {
		if err := parse(); err != nil { // fills the reused lists
			t.Fatalf("parser %d: %v", i, err)
		}
		if n := testing.AllocsPerRun(20, func() { parse() }); n != 0 {
			t.Errorf("parser %d: %v allocations", i, n)
		}
	}
}
