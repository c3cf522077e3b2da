package raknet

import (
	"context"
	"sync"
	"time"

	"github.com/netrak/netrak/transport"
)

// readWaker lets an offline loop (Ping, the dial handshake) use a Conn's
// read deadline for two jobs: waking the loop for its next resend, and
// unblocking a read at once when ctx ends. Once ctx has ended, later
// wake-ups may not move the deadline back into the future.
type readWaker struct {
	conn  transport.Conn
	mu    sync.Mutex
	ended bool
	fired chan struct{}
	stop  func() bool
}

func newReadWaker(ctx context.Context, conn transport.Conn) *readWaker {
	w := &readWaker{conn: conn, fired: make(chan struct{})}
	w.stop = context.AfterFunc(ctx, func() {
		w.mu.Lock()
		w.ended = true
		conn.SetReadDeadline(time.Unix(1, 0))
		w.mu.Unlock()
		close(w.fired)
	})
	return w
}

// wakeAt sets the read deadline to t unless ctx has ended.
func (w *readWaker) wakeAt(t time.Time) {
	w.mu.Lock()
	if !w.ended {
		w.conn.SetReadDeadline(t)
	}
	w.mu.Unlock()
}

// release detaches from ctx and clears the deadline, after letting a
// cancellation in flight land so that it cannot outlive the loop.
func (w *readWaker) release() {
	if !w.stop() {
		<-w.fired
	}
	w.conn.SetReadDeadline(time.Time{})
}
