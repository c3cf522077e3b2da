package refdemo

import (
	"time"

	"github.com/netrak/netrak/netcode"
)

// The convention's constants. KeyHex is the test key from the reference
// README; ProtocolID is written as the flag takes it.
const (
	KeyHex            = "606abe6ec91910ea9a6562f66f2b30e44371d62cd19927266b3c60f4b715aba1"
	ProtocolID        = "0x1122334455667788"
	Address           = "127.0.0.1:40000"
	TokenExpiry       = 30 * time.Second
	TokenTimeout      = 5 * time.Second
	PayloadBytes      = netcode.MaxPayloadBytes
	PayloadsPerSecond = 60
)

// Payload is the payload each side sends: PayloadBytes bytes, byte i being
// i mod 256. Callers must not modify it.
var Payload = func() []byte {
	p := make([]byte, PayloadBytes)
	for i := range p {
		p[i] = byte(i)
	}
	return p
}()

// Matches reports whether p is exactly Payload.
func Matches(p []byte) bool {
	if len(p) != PayloadBytes {
		return false
	}
	for i, b := range p {
		if b != byte(i) {
			return false
		}
	}
	return true
}
