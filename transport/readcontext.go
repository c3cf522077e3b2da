package transport

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"time"
)

// aLongTimeAgo is a read deadline that has always passed.
var aLongTimeAgo = time.Unix(1, 0)

// ReadContext reads one datagram from c like c.ReadFrom, but gives up when
// ctx ends, returning ctx.Err(). It stops the read by moving c's read
// deadline into the past, and clears the deadline again afterwards, so a
// caller that reads through ReadContext should not also manage c's read
// deadline from another goroutine. A datagram that arrives as ctx ends may
// still be returned without error. Each call with a cancellable context
// allocates a little (a context.AfterFunc registration); a hot loop that
// cannot afford it should manage the read deadline itself.
func ReadContext(ctx context.Context, c Conn, p []byte) (int, netip.AddrPort, error) {
	if ctx.Done() == nil {
		return c.ReadFrom(p)
	}
	if err := ctx.Err(); err != nil {
		return 0, netip.AddrPort{}, err
	}
	interrupted := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		c.SetReadDeadline(aLongTimeAgo)
		close(interrupted)
	})
	n, from, err := c.ReadFrom(p)
	if !stop() {
		// The context ended during the read: wait for the deadline change to
		// land before undoing it, so it cannot leak into the next read.
		<-interrupted
		c.SetReadDeadline(time.Time{})
		if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
			return n, from, ctx.Err()
		}
	}
	return n, from, err
}
