package endpoint

import (
	"sync"
	"time"
)

// deadline is a settable point in time with a channel that is closed when
// it passes, so that blocked operations can select on it. Setting a new
// deadline replaces the channel if the old one had fired.
type deadline struct {
	mu    sync.Mutex
	timer *time.Timer
	ch    chan struct{}
}

func newDeadline() *deadline { return &deadline{ch: make(chan struct{})} }

// set moves the deadline to t; the zero time means none.
func (d *deadline) set(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.timer != nil && !d.timer.Stop() {
		<-d.ch // the timer fired (its func closed ch) or is closing it
	}
	d.timer = nil
	select {
	case <-d.ch:
		d.ch = make(chan struct{})
	default:
	}
	if t.IsZero() {
		return
	}
	dur := time.Until(t)
	if dur <= 0 {
		close(d.ch)
		return
	}
	ch := d.ch
	d.timer = time.AfterFunc(dur, func() { close(ch) })
}

// wait returns a channel closed once the deadline has passed.
func (d *deadline) wait() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ch
}

// expired reports whether the deadline has passed.
func (d *deadline) expired() bool {
	select {
	case <-d.wait():
		return true
	default:
		return false
	}
}
