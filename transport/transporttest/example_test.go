package transporttest_test

import (
	"net/netip"
	"testing"

	"github.com/netrak/netrak/transport"
	"github.com/netrak/netrak/transport/simnet"
	"github.com/netrak/netrak/transport/transporttest"
)

// Run checks a Conn implementation from a test function.
func ExampleRun() {
	// In a _test.go file:
	_ = func(t *testing.T) {
		transporttest.Run(t, func(t *testing.T) (transport.Conn, transport.Conn) {
			n := simnet.New(1)
			a, _ := n.Listen(netip.MustParseAddrPort("10.0.0.1:1"))
			b, _ := n.Listen(netip.MustParseAddrPort("10.0.0.2:2"))
			return a, b
		})
	}
}
