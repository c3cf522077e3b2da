package netcode

import (
	"errors"
	"fmt"
	"time"
)

// DefaultTickInterval is how often a ServerConn or ClientConn runs Update
// when ServerConfig.TickInterval or ClientConfig.TickInterval is zero.
const DefaultTickInterval = 10 * time.Millisecond

// ErrTransportFailed is wrapped, together with the transport's last error,
// by the error a ServerConn or ClientConn reports after giving up on a
// transport whose reads keep failing.
var ErrTransportFailed = errors.New("netcode: transport reads keep failing")

// tickInterval checks a config's TickInterval and fills in the default.
func tickInterval(d time.Duration) (time.Duration, error) {
	switch {
	case d == 0:
		return DefaultTickInterval, nil
	case d < 0 || d > KeepAliveInterval:
		return 0, fmt.Errorf("netcode: TickInterval %v not in (0, %v]", d, KeepAliveInterval)
	}
	return d, nil
}

// How a read loop rides out read errors. A UDP socket may report an ICMP
// error from an earlier send on its next read; such an error says nothing
// about the socket, so the first one is retried at once. Errors in a row
// are retried after waits doubling from readRetryMin up to readRetryMax,
// and after readRetryLimit of them the loop gives up: reads that fail
// every time would otherwise spin a core. A read that waited at least
// readErrorIsolation before failing did not spin, so its error starts a
// new run: ICMP errors trickling into an idle socket never add up.
const (
	readRetryMin       = time.Millisecond
	readRetryMax       = 500 * time.Millisecond
	readRetryLimit     = 20 // about 5 s of retries
	readErrorIsolation = time.Millisecond
)

// readRetry paces a read loop through failed reads. The loop calls
// succeeded after every successful read and failed after every failed one.
type readRetry struct {
	done    <-chan struct{} // closed when the loop must stop
	run     int             // failed reads in a row
	resumed time.Time       // when the read after the last failure started
	timer   *time.Timer
}

func (r *readRetry) succeeded() { r.run = 0 }

// failed records a failed read and waits before the next one. It returns
// stop when done was closed meanwhile, and a non-nil giveUp, wrapping
// ErrTransportFailed and err, when the failures have gone on too long.
func (r *readRetry) failed(err error) (giveUp error, stop bool) {
	if r.run > 0 && time.Since(r.resumed) >= readErrorIsolation {
		r.run = 0
	}
	r.run++
	if r.run >= readRetryLimit {
		return fmt.Errorf("%w (%d in a row): %w", ErrTransportFailed, r.run, err), false
	}
	if r.run > 1 {
		wait := min(readRetryMin<<(r.run-2), readRetryMax)
		if r.timer == nil {
			r.timer = time.NewTimer(wait)
		} else {
			r.timer.Reset(wait)
		}
		select {
		case <-r.done:
			return nil, true
		case <-r.timer.C:
		}
	}
	r.resumed = time.Now()
	return nil, false
}

// stop releases the timer.
func (r *readRetry) stop() {
	if r.timer != nil {
		r.timer.Stop()
	}
}
