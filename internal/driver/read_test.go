package driver

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netrak/netrak/transport/simnet"
)

var errBroken = errors.New("test: transport broken")

// read is what one scripted read does: block for wait, then fail with err,
// or, if err is nil, return data from from.
type read struct {
	wait time.Duration
	err  error
	data []byte
	from netip.AddrPort
}

// scriptConn is a transport.Conn whose reads follow a script, for the
// reader's single goroutine; once the script runs out, reads fail as on a
// closed conn. It records when each read started.
type scriptConn struct {
	script  func(i int) (read, bool)
	started []time.Time
}

func (c *scriptConn) ReadFrom(p []byte) (int, netip.AddrPort, error) {
	r, ok := c.script(len(c.started))
	c.started = append(c.started, time.Now())
	if !ok {
		return 0, netip.AddrPort{}, net.ErrClosed
	}
	time.Sleep(r.wait)
	if r.err != nil {
		return 0, netip.AddrPort{}, r.err
	}
	return copy(p, r.data), r.from, nil
}

func (c *scriptConn) WriteTo([]byte, netip.AddrPort) error { return nil }
func (c *scriptConn) LocalAddr() netip.AddrPort            { return netip.AddrPort{} }
func (c *scriptConn) SetReadDeadline(time.Time) error      { return nil }
func (c *scriptConn) Close() error                         { return nil }

// numbered is the error of read i, distinct per read and wrapping
// errBroken.
func numbered(i int) error { return fmt.Errorf("read %d: %w", i, errBroken) }

// failing fails every read at once.
func failing(i int) (read, bool) { return read{err: numbered(i)}, true }

// reading runs r.Run in a goroutine and returns its result channel.
func reading(r *Reader) <-chan error {
	done := make(chan error, 1)
	go func() { done <- r.Run() }()
	return done
}

// giveUpSchedule is when the reads of a transport whose reads all fail at
// once start: the first failure is retried at once, then after waits
// doubling from 1 ms up to 500 ms, and the 20th failure gives up.
func giveUpSchedule() []time.Duration {
	var at []time.Duration
	var t time.Duration
	for run := 1; run <= 20; run++ {
		if run > 2 {
			t += min(time.Millisecond<<(run-3), 500*time.Millisecond)
		}
		at = append(at, t)
	}
	return at
}

func TestReaderGivesUpOnPersistentErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &scriptConn{script: failing}
		var seen []error
		r := &Reader{Conn: c, Handle: func([]byte, netip.AddrPort) { t.Error("Handle called") },
			OnError: func(err error) { seen = append(seen, err) }}
		start := time.Now()
		err := r.Run()
		took := time.Since(start)
		if !errors.Is(err, ErrTransportFailed) || !errors.Is(err, errBroken) {
			t.Fatalf("Run = %v, want an error wrapping ErrTransportFailed and the read's error", err)
		}
		if want := numbered(19).Error(); !strings.Contains(err.Error(), want) {
			t.Fatalf("Run = %v, want the last read's error %q in it", err, want)
		}
		var at []time.Duration
		for _, s := range c.started {
			at = append(at, s.Sub(start))
		}
		if want := giveUpSchedule(); !slices.Equal(at, want) {
			t.Fatalf("reads at %v, want %v", at, want)
		}
		if took != 5011*time.Millisecond {
			t.Fatalf("gave up after %v, want 5.011s", took)
		}
		if len(seen) != 20 {
			t.Fatalf("OnError saw %d errors, want 20", len(seen))
		}
		for i, e := range seen {
			if e.Error() != numbered(i).Error() {
				t.Fatalf("OnError %d saw %v", i, e)
			}
		}
	})
}

// TestReaderIsolatedErrorsNeverGiveUp: errors that a successful read
// separates, or that each come after the read waited at least a
// millisecond, never add up to giving up, however many there are, and
// cost no pause beyond the usual backoff of a run.
func TestReaderIsolatedErrorsNeverGiveUp(t *testing.T) {
	from := netip.MustParseAddrPort("192.0.2.1:7000")
	for _, tc := range []struct {
		name    string
		script  func(i int) (read, bool)
		errors  int
		reads   int
		elapsed time.Duration
	}{
		{
			// 19 failures in a row, one short of giving up, then a
			// datagram, ten times over.
			name: "runs of 19 between datagrams",
			script: func(i int) (read, bool) {
				if i == 200 {
					return read{}, false
				}
				if i%20 == 19 {
					return read{data: []byte{byte(i)}, from: from}, true
				}
				return read{err: numbered(i)}, true
			},
			errors: 190, reads: 10,
			elapsed: 10 * giveUpSchedule()[19],
		},
		{
			name: "every read waits 1 ms, then fails",
			script: func(i int) (read, bool) {
				if i == 10_000 {
					return read{}, false
				}
				return read{wait: time.Millisecond, err: numbered(i)}, true
			},
			errors: 10_000, elapsed: 10 * time.Second,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := &scriptConn{script: tc.script}
				var got [][]byte
				errs := 0
				r := &Reader{Conn: c,
					Handle: func(b []byte, f netip.AddrPort) {
						if f != from {
							t.Errorf("datagram from %v", f)
						}
						got = append(got, slices.Clone(b))
					},
					OnError: func(error) { errs++ }}
				start := time.Now()
				if err := r.Run(); err != nil {
					t.Fatalf("Run = %v", err)
				}
				if took := time.Since(start); took != tc.elapsed {
					t.Errorf("took %v, want %v", took, tc.elapsed)
				}
				if errs != tc.errors || len(got) != tc.reads {
					t.Fatalf("OnError saw %d errors, Handle %d datagrams; want %d and %d", errs, len(got), tc.errors, tc.reads)
				}
				for k, b := range got {
					if len(b) != 1 || int(b[0]) != 20*k+19 {
						t.Fatalf("datagram %d is %v", k, b)
					}
				}
			})
		})
	}
}

// TestReaderQuickErrorsAddUp: a read that waits less than a millisecond
// before failing still counts as spinning.
func TestReaderQuickErrorsAddUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &scriptConn{script: func(i int) (read, bool) {
			return read{wait: time.Millisecond - time.Nanosecond, err: numbered(i)}, true
		}}
		r := &Reader{Conn: c, Handle: func([]byte, netip.AddrPort) {}}
		start := time.Now()
		err := r.Run()
		if !errors.Is(err, ErrTransportFailed) {
			t.Fatalf("Run = %v", err)
		}
		if took, want := time.Since(start), 5011*time.Millisecond+20*(time.Millisecond-time.Nanosecond); took != want || len(c.started) != 20 {
			t.Fatalf("gave up after %v and %d reads, want %v and 20", took, len(c.started), want)
		}
	})
}

// TestReaderStop: closing Stop ends Run with nil, whether it is blocked in
// a read (which whoever closes Stop unblocks) or pausing between failing
// reads (which Stop cuts short).
func TestReaderStop(t *testing.T) {
	t.Run("blocked in a read", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			n := simnet.New(1)
			defer n.Close()
			conn, err := n.Listen(netip.MustParseAddrPort("10.0.0.1:5000"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			stop := make(chan struct{})
			var errs []error
			done := reading(&Reader{Conn: conn, Stop: stop, Handle: func([]byte, netip.AddrPort) {},
				OnError: func(err error) { errs = append(errs, err) }})
			time.Sleep(time.Second)
			close(stop)
			conn.SetReadDeadline(time.Unix(1, 0))
			if err := <-done; err != nil {
				t.Fatalf("Run = %v", err)
			}
			// The deadline's error is how Stop got in, not a failure.
			if len(errs) != 0 {
				t.Fatalf("OnError saw %v", errs)
			}
		})
	})
	t.Run("pausing between failing reads", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c := &scriptConn{script: failing}
			stop := make(chan struct{})
			errs := 0
			done := reading(&Reader{Conn: c, Stop: stop, Handle: func([]byte, netip.AddrPort) {}, OnError: func(error) { errs++ }})
			start := time.Now()
			time.Sleep(100 * time.Millisecond) // in the pause after read 7, until 127 ms
			close(stop)
			if err := <-done; err != nil {
				t.Fatalf("Run = %v", err)
			}
			if took := time.Since(start); took != 100*time.Millisecond {
				t.Fatalf("Run returned %v after Stop was closed", took-100*time.Millisecond)
			}
			if len(c.started) != 8 || errs != 8 {
				t.Fatalf("%d reads, %d errors seen; want 8 of each", len(c.started), errs)
			}
		})
	})
}

// TestReaderClosedConn: Run hands over each datagram, with its source
// unmapped from IPv4-in-IPv6 form, and returns nil once the conn is
// closed, also from a blocked read.
func TestReaderClosedConn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := simnet.New(2)
		defer n.Close()
		conn, err := n.Listen(netip.MustParseAddrPort("10.0.0.1:5000"))
		if err != nil {
			t.Fatal(err)
		}
		peer, err := n.Listen(netip.MustParseAddrPort("10.0.0.2:6000"))
		if err != nil {
			t.Fatal(err)
		}
		defer peer.Close()
		type datagram struct {
			data string
			from netip.AddrPort
		}
		var got []datagram
		done := reading(&Reader{Conn: conn, Handle: func(b []byte, from netip.AddrPort) {
			got = append(got, datagram{string(b), from})
		}})
		for _, s := range []string{"one", "two", "three"} {
			if err := peer.WriteTo([]byte(s), conn.LocalAddr()); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		conn.Close()
		if err := <-done; err != nil {
			t.Fatalf("Run = %v", err)
		}
		want := []datagram{{"one", peer.LocalAddr()}, {"two", peer.LocalAddr()}, {"three", peer.LocalAddr()}}
		if !slices.Equal(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}

		// A transport that reports IPv4 peers IPv4-mapped, and one
		// datagram too long for any protocol: it arrives oversized.
		mapped := netip.MustParseAddrPort("[::ffff:192.0.2.9]:7000")
		long := make([]byte, 3*MaxDatagram)
		c := &scriptConn{script: func(i int) (read, bool) {
			if i == 1 {
				return read{data: long, from: mapped}, true
			}
			return read{data: []byte("x"), from: mapped}, i < 2
		}}
		var sizes []int
		var froms []netip.AddrPort
		r := &Reader{Conn: c, Handle: func(b []byte, from netip.AddrPort) {
			sizes = append(sizes, len(b))
			froms = append(froms, from)
		}}
		if err := r.Run(); err != nil {
			t.Fatalf("Run = %v", err)
		}
		want4 := netip.MustParseAddrPort("192.0.2.9:7000")
		if !slices.Equal(sizes, []int{1, MaxDatagram}) || !slices.Equal(froms, []netip.AddrPort{want4, want4}) {
			t.Fatalf("sizes %v from %v", sizes, froms)
		}
	})
}

// TestReaderDeadlineWithoutStop: a read deadline that expires while Stop is
// open is an error like any other, retried, not the end of Run.
func TestReaderDeadlineWithoutStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &scriptConn{script: func(i int) (read, bool) {
			if i == 0 {
				return read{err: os.ErrDeadlineExceeded}, true
			}
			return read{data: []byte("after")}, i < 2
		}}
		var seen []error
		var got []string
		r := &Reader{Conn: c, Stop: make(chan struct{}),
			Handle:  func(b []byte, _ netip.AddrPort) { got = append(got, string(b)) },
			OnError: func(err error) { seen = append(seen, err) }}
		if err := r.Run(); err != nil {
			t.Fatalf("Run = %v", err)
		}
		if len(seen) != 1 || !errors.Is(seen[0], os.ErrDeadlineExceeded) || !slices.Equal(got, []string{"after"}) {
			t.Fatalf("errors %v, datagrams %q", seen, got)
		}
	})
}
