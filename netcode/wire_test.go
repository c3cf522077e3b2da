package netcode

import "testing"

// appender is the encoding half of the wire types whose Append needs no
// context: the request packet and the tokens.
type appender interface {
	Append(b []byte) ([]byte, error)
	Len() int
}

// mustAppend encodes x into a new slice, failing the test if it cannot or
// if the encoding is not Len() bytes.
func mustAppend(tb testing.TB, x appender) []byte {
	tb.Helper()
	b, err := x.Append(nil)
	if err != nil {
		tb.Fatalf("append %T: %v", x, err)
	}
	if len(b) != x.Len() {
		tb.Fatalf("%T: Len() = %d, appended %d bytes", x, x.Len(), len(b))
	}
	return b
}
