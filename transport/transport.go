package transport

import (
	"net/netip"
	"time"
)

// Conn is a datagram endpoint. Every protocol layer in netrak reads and
// writes through a Conn instead of opening sockets itself, so the same code
// runs over UDP, over the in-memory simulated network, or over anything a
// user brings.
//
// Contract:
//
//   - Concurrency: ReadFrom may be called by one goroutine while WriteTo is
//     called from any number of others. Close, LocalAddr and SetReadDeadline
//     are safe to call at any time from any goroutine. Concurrent ReadFrom
//     calls are allowed but each datagram goes to exactly one of them.
//   - Datagram boundaries are preserved. If p is shorter than the datagram,
//     ReadFrom fills p, discards the rest and returns len(p) with no error.
//   - WriteTo sends p as one datagram or not at all. It does not retain p
//     after it returns. A datagram lost in flight is not an error: datagram
//     delivery is unreliable by nature.
//   - Close unblocks any ReadFrom in progress. After Close, ReadFrom and
//     WriteTo return an error for which errors.Is(err, net.ErrClosed) holds.
//     Close is idempotent; calls after the first return nil.
//   - An owner goroutine stops a blocked ReadFrom without closing the Conn by
//     setting a read deadline in the past. A read that hits the deadline
//     returns an error for which errors.Is(err, os.ErrDeadlineExceeded)
//     holds and which is a net.Error whose Timeout method reports true. A
//     zero time clears the deadline. ReadContext wraps this for callers that
//     hold a context.Context.
type Conn interface {
	// ReadFrom reads one datagram into p and reports its length and source.
	ReadFrom(p []byte) (n int, from netip.AddrPort, err error)
	// WriteTo sends p as one datagram to the given address.
	WriteTo(p []byte, to netip.AddrPort) error
	// LocalAddr is the address this endpoint is bound to.
	LocalAddr() netip.AddrPort
	// SetReadDeadline sets the time after which ReadFrom fails.
	SetReadDeadline(t time.Time) error
	// Close releases the endpoint and unblocks readers.
	Close() error
}
