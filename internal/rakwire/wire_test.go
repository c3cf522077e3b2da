package rakwire

import (
	"encoding/hex"
	"strings"
	"testing"
)

// fromHex decodes hex with spaces allowed between bytes.
func fromHex(tb testing.TB, s string) []byte {
	tb.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		tb.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// mustAppend appends x to b and fails the test if x does not encode.
func mustAppend(tb testing.TB, b []byte, x interface{ Append([]byte) ([]byte, error) }) []byte {
	tb.Helper()
	b, err := x.Append(b)
	if err != nil {
		tb.Fatalf("%+v: %v", x, err)
	}
	return b
}

// benchDatagramLen is the longest RakNet datagram: MTU 1492 less the IPv4
// and UDP headers.
const benchDatagramLen = 1492 - 28
