package driver

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/netrak/netrak/transport"
)

// ErrTransportFailed is wrapped, together with the transport's last error,
// by the error Reader.Run returns when it gives up on a transport whose reads
// keep failing.
var ErrTransportFailed = errors.New("transport reads keep failing")

// How Reader.Run rides out read errors. A UDP socket may report an ICMP error
// from an earlier send on its next read; such an error says nothing about
// the socket, so the first one is retried at once. Errors in a row are
// retried after waits doubling from retryMin up to retryMax, and after
// retryLimit of them it gives up: reads that fail every time would
// otherwise spin a core. A read that waited at least errorIsolation before
// failing did not spin, so its error starts a new run: ICMP errors
// trickling into an idle socket never add up.
const (
	retryMin       = time.Millisecond
	retryMax       = 500 * time.Millisecond
	retryLimit     = 20 // about 5 s of retries
	errorIsolation = time.Millisecond
)

// MaxDatagram is the read buffer Reader.Run uses: larger than any datagram the
// protocols accept, so an oversized one still reads as oversized and is
// dropped by the parser rather than truncated into something valid.
const MaxDatagram = 2048

// Reader reads a transport.Conn on behalf of a protocol's driver.
type Reader struct {
	// Conn is read until it is closed.
	Conn transport.Conn
	// Stop, when closed, ends Run too. Whoever closes it also makes a
	// blocked read return, by closing Conn or setting a read deadline in
	// the past.
	Stop <-chan struct{}
	// Handle receives each datagram, with its source address unmapped from
	// IPv4-in-IPv6 form. It must not keep b.
	Handle func(b []byte, from netip.AddrPort)
	// OnError, if set, sees every failed read before it is retried, for
	// counting.
	OnError func(error)
}

// Run reads datagrams until Conn is closed or Stop is closed (it returns
// nil), or reads have failed too often in a row (it returns an error
// wrapping ErrTransportFailed and the last error).
func (r *Reader) Run() error {
	retry := readRetry{stop: r.Stop}
	defer retry.release()
	buf := make([]byte, MaxDatagram)
	for {
		n, from, err := r.Conn.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			select {
			case <-r.Stop:
				return nil
			default:
			}
			if r.OnError != nil {
				r.OnError(err)
			}
			giveUp, stopped := retry.failed(err)
			if stopped {
				return nil
			}
			if giveUp != nil {
				return giveUp
			}
			continue
		}
		retry.succeeded()
		r.Handle(buf[:n], netip.AddrPortFrom(from.Addr().Unmap(), from.Port()))
	}
}

// readRetry paces a read loop through failed reads.
type readRetry struct {
	stop    <-chan struct{}
	run     int       // failed reads in a row
	resumed time.Time // when the read after the last failure started
	timer   *time.Timer
}

func (r *readRetry) succeeded() { r.run = 0 }

// failed records a failed read and waits before the next one. It reports
// stopped when stop was closed meanwhile, and a non-nil giveUp when the
// failures have gone on too long.
func (r *readRetry) failed(err error) (giveUp error, stopped bool) {
	if r.run > 0 && time.Since(r.resumed) >= errorIsolation {
		r.run = 0
	}
	r.run++
	if r.run >= retryLimit {
		return fmt.Errorf("%w (%d in a row): %w", ErrTransportFailed, r.run, err), false
	}
	if r.run > 1 {
		wait := min(retryMin<<(r.run-2), retryMax)
		if r.timer == nil {
			r.timer = time.NewTimer(wait)
		} else {
			r.timer.Reset(wait)
		}
		select {
		case <-r.stop:
			return nil, true
		case <-r.timer.C:
		}
	}
	r.resumed = time.Now()
	return nil, false
}

func (r *readRetry) release() {
	if r.timer != nil {
		r.timer.Stop()
	}
}
