package netcode

import (
	"net/netip"
	"sync"
	"time"

	"github.com/netrak/netrak/internal/driver"
	"github.com/netrak/netrak/transport"
)

// ErrTransportFailed is wrapped, together with the transport's last error,
// by the error a ServerConn or ClientConn reports after giving up on a
// transport whose reads keep failing. It is the error every protocol
// driver of this module gives up with, so errors.Is matches it whichever
// layer reported it.
var ErrTransportFailed = driver.ErrTransportFailed

// connDriver is what ServerConn and ClientConn share: it runs a sans-I/O
// core over a transport.Conn with two goroutines, a driver.Reader feeding
// it datagrams and a driver.Loop running Update at the time the core's
// NextTimeout names, and serialises them with the API calls under mu.
// There is no fixed tick: an idle core costs nothing, and a busy one runs
// each timer when it is due rather than on the next tick after.
type connDriver struct {
	conn transport.Conn
	core driven

	mu     sync.Mutex
	closed bool  // Close was called
	failed error // the reader gave up on conn

	done   chan struct{} // closed when the goroutines must stop
	loop   *driver.Loop
	timers *driver.Handle // the core's place in loop
	reader sync.WaitGroup
}

// driven is the core a connDriver runs. Its methods are called with the
// driver's mu held.
type driven interface {
	// receiveLocked hands the core one datagram.
	receiveLocked(p []byte, from netip.AddrPort, now time.Time)
	// updateLocked runs the core's Update and sends what it queued.
	updateLocked(now time.Time)
	// nextTimeoutLocked is the core's NextTimeout.
	nextTimeoutLocked() time.Time
	// shutdownLocked ends every session, queueing and sending the
	// disconnect packets: on Close (err nil), or because the reader gave
	// up on the transport with err. What was received before stays
	// available to the application.
	shutdownLocked(now time.Time, err error)
	// releaseLocked drops what the application has not taken, on Close.
	releaseLocked()
}

// start launches the goroutines; d.conn must be set, and the core ready
// for its first Update.
func (d *connDriver) start(core driven) {
	d.core = core
	d.done = make(chan struct{})
	d.loop = driver.NewLoop()
	d.timers = d.loop.Add(d)
	d.timers.WakeBy(time.Now()) // Run asks the core for its first deadline
	d.reader.Add(1)
	go func() {
		defer d.reader.Done()
		r := driver.Reader{Conn: d.conn, Stop: d.done, Handle: d.receive}
		if err := r.Run(); err != nil {
			d.fail(err)
		}
	}()
}

// Run is the core's task on the loop.
func (d *connDriver) Run(now time.Time) time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed || d.failed != nil {
		return time.Time{}
	}
	d.core.updateLocked(now)
	return d.core.nextTimeoutLocked()
}

func (d *connDriver) receive(p []byte, from netip.AddrPort) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	d.core.receiveLocked(p, from, time.Now())
	d.wakeLocked()
}

// wakeLocked makes the loop run the core by its NextTimeout, after
// anything that may have brought it forward: a datagram (a client
// connecting to a server, a challenge reaching a client) or an API call.
// Deadlines that moved later need nothing; the loop runs the core at the
// old time, Update finds nothing due, and the core names the new one.
func (d *connDriver) wakeLocked() {
	d.timers.WakeBy(d.core.nextTimeoutLocked())
}

// fail shuts the core down after the reader gave up with err, and closes
// the transport.
func (d *connDriver) fail(err error) {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return
	}
	d.failed = err
	d.core.shutdownLocked(time.Now(), err)
	close(d.done)
	d.mu.Unlock()
	d.conn.Close()
	// Nothing is left to time; an application that never calls Close
	// must not keep the loop's goroutine.
	d.loop.Stop()
}

// close shuts the core down (unless the reader already did), stops the
// goroutines and closes the transport. Later calls return nil once the
// goroutines have stopped.
func (d *connDriver) close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		d.wait()
		return nil
	}
	if d.failed == nil {
		d.core.shutdownLocked(time.Now(), nil)
		close(d.done)
	}
	d.closed = true
	d.core.releaseLocked()
	d.mu.Unlock()
	err := d.conn.Close()
	d.wait()
	return err
}

func (d *connDriver) wait() {
	d.loop.Stop()
	d.reader.Wait()
}
