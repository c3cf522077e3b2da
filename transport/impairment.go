package transport

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// Impairment describes what one direction of a path does to the datagrams
// crossing it. The zero value is a perfect link: no delay, no loss, no limit.
// The simulated network (transport/simnet) and the impairment relay
// (transport/relay) both apply it through a Shaper, so a scenario behaves the
// same in memory and over real sockets.
type Impairment struct {
	// Latency is the fixed one-way delay added to every datagram.
	Latency time.Duration
	// Jitter spreads the delay uniformly over [Latency-Jitter,
	// Latency+Jitter] (never below zero). Jitter larger than the gap between
	// datagrams reorders them, as on a real network.
	Jitter time.Duration
	// Loss is the probability, in [0, 1], that a datagram is dropped.
	// Loss: 1 cuts the link.
	Loss float64
	// Duplicate is the probability, in [0, 1], that a delivered datagram
	// arrives twice. The copy gets its own jitter.
	Duplicate float64
	// Reorder is the probability, in [0, 1], that a datagram is held back an
	// extra Latency+Jitter+1ms, so that datagrams sent shortly after it
	// overtake it.
	Reorder float64
	// Bandwidth caps the link at this many bytes per second. Datagrams wait
	// in a first-in first-out queue for their serialisation time
	// (size/Bandwidth). 0 means unlimited.
	Bandwidth int
	// QueueLimit bounds the bytes waiting for the bandwidth cap; a datagram
	// that would exceed it is dropped, like a router's tail drop. 0 means
	// DefaultQueueLimit. It has no effect when Bandwidth is 0.
	QueueLimit int
	// MTU is the largest datagram, in bytes, the link carries; larger ones
	// are dropped. 0 means unlimited.
	MTU int
}

// DefaultQueueLimit is the bandwidth queue size used when
// Impairment.QueueLimit is 0.
const DefaultQueueLimit = 64 << 10

// ErrBadImpairment is returned (wrapped) for an Impairment with a negative
// duration or size, or a probability outside [0, 1].
var ErrBadImpairment = errors.New("transport: invalid impairment")

// Validate reports whether every field of imp is in range.
func (imp Impairment) Validate() error {
	prob := func(name string, p float64) error {
		if !(p >= 0 && p <= 1) { // also rejects NaN
			return fmt.Errorf("%w: %s %v not in [0, 1]", ErrBadImpairment, name, p)
		}
		return nil
	}
	nonNeg := func(name string, v int64) error {
		if v < 0 {
			return fmt.Errorf("%w: negative %s", ErrBadImpairment, name)
		}
		return nil
	}
	return errors.Join(
		nonNeg("latency", int64(imp.Latency)),
		nonNeg("jitter", int64(imp.Jitter)),
		prob("loss", imp.Loss),
		prob("duplicate", imp.Duplicate),
		prob("reorder", imp.Reorder),
		nonNeg("bandwidth", int64(imp.Bandwidth)),
		nonNeg("queue limit", int64(imp.QueueLimit)),
		nonNeg("MTU", int64(imp.MTU)),
	)
}

// DropReason says why a Shaper dropped a datagram.
type DropReason uint8

const (
	// NotDropped means the datagram is delivered.
	NotDropped DropReason = iota
	// DropLoss is random loss (Impairment.Loss).
	DropLoss
	// DropMTU is a datagram larger than Impairment.MTU.
	DropMTU
	// DropQueue is a full bandwidth queue (Impairment.QueueLimit).
	DropQueue
)

func (r DropReason) String() string {
	switch r {
	case NotDropped:
		return "not dropped"
	case DropLoss:
		return "loss"
	case DropMTU:
		return "MTU"
	case DropQueue:
		return "queue full"
	}
	return fmt.Sprintf("DropReason(%d)", uint8(r))
}

// Fate is a Shaper's decision about one datagram.
type Fate struct {
	// Drop is NotDropped unless the datagram is to be discarded.
	Drop DropReason
	// Copies is how many copies to deliver: 0 when dropped, 2 when
	// duplicated, 1 otherwise.
	Copies int
	// Delay holds, for each copy, how long after the write it arrives.
	Delay [2]time.Duration
}

// Shaper decides the fate of every datagram crossing one direction of a
// link. Its random choices come from its own PRNG, seeded at creation, and
// it draws the same number of values for every datagram whatever the
// outcome, so the fate of the n-th datagram depends only on the seed, n, the
// impairment in force and the write times: never on other links or on
// goroutine scheduling. A Shaper is safe for concurrent use.
type Shaper struct {
	counters *ImpairmentCounters

	mu        sync.Mutex
	imp       Impairment
	rng       *rand.Rand
	busyUntil time.Time // when the bandwidth queue drains
}

// NewShaper returns a Shaper applying imp, with a PCG generator seeded from
// (seed, stream), counting into c. A nil c counts nowhere.
func NewShaper(imp Impairment, seed, stream uint64, c *ImpairmentCounters) *Shaper {
	if c == nil {
		c = new(ImpairmentCounters)
	}
	return &Shaper{counters: c, imp: imp, rng: rand.New(rand.NewPCG(seed, stream))}
}

// SetImpairment replaces the impairment for datagrams written from now on.
// Datagrams already in flight keep their fate.
func (s *Shaper) SetImpairment(imp Impairment) {
	s.mu.Lock()
	s.imp = imp
	s.mu.Unlock()
}

// Impairment returns the impairment in force.
func (s *Shaper) Impairment() Impairment {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.imp
}

// Decide returns the fate of a datagram of size bytes written at now, and
// counts it. The caller counts what happens at delivery (Delivered,
// DroppedOverflow, DroppedUnreachable).
func (s *Shaper) Decide(now time.Time, size int) Fate {
	s.mu.Lock()
	defer s.mu.Unlock()
	imp := &s.imp
	c := s.counters
	c.Sent.Add(1)

	// A fixed number of draws per datagram keeps later fates independent of
	// this one's outcome.
	lossDraw := s.rng.Float64()
	dupDraw := s.rng.Float64()
	reorderDraw := s.rng.Float64()
	jitter0 := s.rng.Float64()
	jitter1 := s.rng.Float64()

	if imp.MTU > 0 && size > imp.MTU {
		c.DroppedMTU.Add(1)
		return Fate{Drop: DropMTU}
	}
	if lossDraw < imp.Loss {
		c.DroppedLoss.Add(1)
		return Fate{Drop: DropLoss}
	}

	var queued time.Duration
	if imp.Bandwidth > 0 {
		start := s.busyUntil
		if start.Before(now) {
			start = now
		}
		// Bytes still waiting; float64 because duration × rate can overflow
		// int64 for large queue limits.
		backlog := int64(start.Sub(now).Seconds() * float64(imp.Bandwidth))
		limit := imp.QueueLimit
		if limit == 0 {
			limit = DefaultQueueLimit
		}
		if backlog+int64(size) > int64(limit) {
			c.DroppedQueue.Add(1)
			return Fate{Drop: DropQueue}
		}
		serialise := time.Duration(int64(size) * int64(time.Second) / int64(imp.Bandwidth))
		s.busyUntil = start.Add(serialise)
		queued = s.busyUntil.Sub(now)
	}

	f := Fate{Copies: 1}
	f.Delay[0] = queued + spread(imp.Latency, imp.Jitter, jitter0)
	if reorderDraw < imp.Reorder {
		f.Delay[0] += imp.Latency + imp.Jitter + time.Millisecond
		c.Reordered.Add(1)
	}
	if dupDraw < imp.Duplicate {
		f.Copies = 2
		f.Delay[1] = queued + spread(imp.Latency, imp.Jitter, jitter1)
		c.Duplicated.Add(1)
	}
	if f.Delay[0] > 0 {
		c.Delayed.Add(1)
	}
	return f
}

// spread maps u in [0, 1) to a delay uniform in [latency-jitter,
// latency+jitter], clamped at zero.
func spread(latency, jitter time.Duration, u float64) time.Duration {
	d := latency + time.Duration((2*u-1)*float64(jitter))
	return max(d, 0)
}

// ImpairmentCounters accumulate what a Shaper and its owner did to datagrams. All
// fields may be updated concurrently; read a consistent-enough view with
// Snapshot.
type ImpairmentCounters struct {
	Sent               atomic.Uint64 // datagrams offered to the link
	Delivered          atomic.Uint64 // copies handed to a receiver
	DeliveredBytes     atomic.Uint64 // bytes in those copies
	DroppedLoss        atomic.Uint64 // random loss
	DroppedMTU         atomic.Uint64 // larger than the MTU
	DroppedQueue       atomic.Uint64 // bandwidth queue or in-flight limit full
	DroppedOverflow    atomic.Uint64 // receiver's queue full
	DroppedUnreachable atomic.Uint64 // nobody at the destination, or the write failed
	Duplicated         atomic.Uint64 // datagrams sent twice
	Reordered          atomic.Uint64 // datagrams held back for others to overtake
	Delayed            atomic.Uint64 // datagrams given a non-zero delay
}

// Snapshot copies the counters into a ImpairmentStats.
func (c *ImpairmentCounters) Snapshot() ImpairmentStats {
	return ImpairmentStats{
		Sent:               c.Sent.Load(),
		Delivered:          c.Delivered.Load(),
		DeliveredBytes:     c.DeliveredBytes.Load(),
		DroppedLoss:        c.DroppedLoss.Load(),
		DroppedMTU:         c.DroppedMTU.Load(),
		DroppedQueue:       c.DroppedQueue.Load(),
		DroppedOverflow:    c.DroppedOverflow.Load(),
		DroppedUnreachable: c.DroppedUnreachable.Load(),
		Duplicated:         c.Duplicated.Load(),
		Reordered:          c.Reordered.Load(),
		Delayed:            c.Delayed.Load(),
	}
}

// ImpairmentStats is a snapshot of ImpairmentCounters. See ImpairmentCounters for the meaning of each
// field.
type ImpairmentStats struct {
	Sent               uint64
	Delivered          uint64
	DeliveredBytes     uint64
	DroppedLoss        uint64
	DroppedMTU         uint64
	DroppedQueue       uint64
	DroppedOverflow    uint64
	DroppedUnreachable uint64
	Duplicated         uint64
	Reordered          uint64
	Delayed            uint64
}

// Add returns the field-by-field sum of s and o.
func (s ImpairmentStats) Add(o ImpairmentStats) ImpairmentStats {
	return ImpairmentStats{
		Sent:               s.Sent + o.Sent,
		Delivered:          s.Delivered + o.Delivered,
		DeliveredBytes:     s.DeliveredBytes + o.DeliveredBytes,
		DroppedLoss:        s.DroppedLoss + o.DroppedLoss,
		DroppedMTU:         s.DroppedMTU + o.DroppedMTU,
		DroppedQueue:       s.DroppedQueue + o.DroppedQueue,
		DroppedOverflow:    s.DroppedOverflow + o.DroppedOverflow,
		DroppedUnreachable: s.DroppedUnreachable + o.DroppedUnreachable,
		Duplicated:         s.Duplicated + o.Duplicated,
		Reordered:          s.Reordered + o.Reordered,
		Delayed:            s.Delayed + o.Delayed,
	}
}

// Dropped is the total of all drop counters.
func (s ImpairmentStats) Dropped() uint64 {
	return s.DroppedLoss + s.DroppedMTU + s.DroppedQueue + s.DroppedOverflow + s.DroppedUnreachable
}

// String formats the counters on one line, for logs and command output.
func (s ImpairmentStats) String() string {
	return fmt.Sprintf("sent=%d delivered=%d (%d B) dropped: loss=%d mtu=%d queue=%d overflow=%d unreachable=%d; duplicated=%d reordered=%d delayed=%d",
		s.Sent, s.Delivered, s.DeliveredBytes,
		s.DroppedLoss, s.DroppedMTU, s.DroppedQueue, s.DroppedOverflow, s.DroppedUnreachable,
		s.Duplicated, s.Reordered, s.Delayed)
}
