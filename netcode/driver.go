package netcode

import (
	"errors"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/netrak/netrak/transport"
)

// driver is what ServerConn and ClientConn share: it runs a sans-I/O core
// over a transport.Conn with two goroutines, one reading datagrams and one
// ticking the core, and serialises them with the API calls under mu.
type driver struct {
	conn transport.Conn

	mu     sync.Mutex
	closed bool  // Close was called
	failed error // the read loop gave up on conn

	done chan struct{} // closed when the goroutines must stop
	wg   sync.WaitGroup
}

// driven is the core a driver runs. Its methods are called with the
// driver's mu held.
type driven interface {
	// receiveLocked hands the core one datagram.
	receiveLocked(p []byte, from netip.AddrPort, now time.Time)
	// tickLocked runs the core's Update.
	tickLocked(now time.Time)
	// shutdownLocked ends every session, queueing and sending the
	// disconnect packets: on Close (err nil), or because the read loop gave
	// up on the transport with err. What was received before stays
	// available to the application.
	shutdownLocked(now time.Time, err error)
	// releaseLocked drops what the application has not taken, on Close.
	releaseLocked()
}

// start launches the goroutines; d.conn must be set.
func (d *driver) start(tick time.Duration, core driven) {
	d.done = make(chan struct{})
	d.wg.Add(2)
	go d.readLoop(core)
	go d.tickLoop(tick, core)
}

func (d *driver) readLoop(core driven) {
	defer d.wg.Done()
	retry := readRetry{done: d.done}
	defer retry.stop()
	buf := make([]byte, 2*MaxPacketBytes) // oversized datagrams still read as oversized
	for {
		n, from, err := d.conn.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			select {
			case <-d.done:
				return
			default:
			}
			// An isolated error (an ICMP unreachable reported on a UDP
			// socket, say) ends nothing; errors that go on and on do.
			giveUp, stop := retry.failed(err)
			if giveUp != nil {
				d.fail(giveUp, core)
			}
			if giveUp != nil || stop {
				return
			}
			continue
		}
		retry.succeeded()
		d.mu.Lock()
		if d.closed {
			d.mu.Unlock()
			return
		}
		core.receiveLocked(buf[:n], from, time.Now())
		d.mu.Unlock()
	}
}

// fail shuts the core down after the read loop gave up with err, and
// closes the transport.
func (d *driver) fail(err error, core driven) {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return
	}
	d.failed = err
	core.shutdownLocked(time.Now(), err)
	close(d.done)
	d.mu.Unlock()
	d.conn.Close()
}

func (d *driver) tickLoop(interval time.Duration, core driven) {
	defer d.wg.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-d.done:
			return
		case now := <-t.C:
			d.mu.Lock()
			if !d.closed && d.failed == nil {
				core.tickLocked(now)
			}
			d.mu.Unlock()
		}
	}
}

// close shuts the core down (unless the read loop already did), stops the
// goroutines and closes the transport. Later calls return nil once the
// goroutines have stopped.
func (d *driver) close(core driven) error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		d.wg.Wait()
		return nil
	}
	if d.failed == nil {
		core.shutdownLocked(time.Now(), nil)
		close(d.done)
	}
	d.closed = true
	core.releaseLocked()
	d.mu.Unlock()
	err := d.conn.Close()
	d.wg.Wait()
	return err
}

// signal wakes one waiter on a capacity-1 channel without blocking.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
