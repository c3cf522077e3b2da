package reliability

import "time"

// reorderTracker measures how late the peer's datagrams arrive when the
// path reorders them, so that the receiver waits that long before it
// reports a gap (the NAK delay). A gap that a late datagram fills after
// it was NAKed makes the peer resend for nothing and, with a controller
// that believes NAKs, cut its window. RACK (RFC 8985) adapts its
// reordering window for the same reason; here the receiver adapts, since
// it is the side that sees the reordering, and it also holds for peers
// that take every NAK at its word, as the original library does.
//
// It remembers the arrival time of the last reorderRing datagram numbers.
// When a datagram arrives below the newest number seen, its lateness is
// the time since the first datagram numbered after it arrived: that is
// how long its gap was visible. The allowance is the largest lateness
// seen, held for reorderHold and then halved, so a burst of reordering
// raises it at once and a path that stops reordering gets prompt NAKs back.
type reorderTracker struct {
	ring [reorderRing]struct {
		num uint32
		at  int64 // UnixNano; 0: empty
	}
	lateness
}

// lateness is the largest reordering delay seen lately: raised at once by
// a larger sample, held for reorderHold, then halved per hold period
// without one.
type lateness struct {
	late   time.Duration // largest lateness in the current hold period
	lateAt time.Time     // when late was last raised or halved
}

const (
	reorderRing = 256
	// reorderHold is how long a lateness sample keeps the allowance up.
	reorderHold = 10 * time.Second
	// maxNAKDelay caps the reordering allowance: a datagram later than
	// this is reported missing, and the peer's resend costs less than
	// waiting longer would.
	maxNAKDelay = 250 * time.Millisecond
)

// arrived records a new datagram num that arrived at now; next is the
// number after the newest one seen before it.
func (r *reorderTracker) arrived(num, next uint32, now time.Time) {
	if d := seqDiff(num, next); d < 0 && -d < reorderRing {
		// Late: the earliest arrival among the numbers after it.
		var first int64
		for k := seqAdd(num, 1); k != next; k = seqAdd(k, 1) {
			s := &r.ring[k%reorderRing]
			if s.at != 0 && s.num == k && (first == 0 || s.at < first) {
				first = s.at
			}
		}
		if first != 0 {
			r.sample(time.Duration(now.UnixNano()-first), now)
		}
	}
	s := &r.ring[num%reorderRing]
	s.num, s.at = num, now.UnixNano()
}

func (r *lateness) sample(late time.Duration, now time.Time) {
	r.decay(now)
	if late > r.late {
		r.late = late
		r.lateAt = now
	}
}

func (r *lateness) decay(now time.Time) {
	for r.late > 0 && now.Sub(r.lateAt) >= reorderHold {
		r.late /= 2
		r.lateAt = r.lateAt.Add(reorderHold)
		if r.late < time.Millisecond {
			r.late = 0
		}
	}
}

// allowance returns how long a gap waits before it is NAKed: at least
// floor, and an eighth more than the largest recent lateness (plus a
// millisecond, as the lateness of the next reordered datagram varies),
// within maxNAKDelay and, when the RTT is known, within one smoothed RTT
// (past that the peer's own timer is about to fire anyway).
func (r *lateness) allowance(floor, srtt time.Duration, now time.Time) time.Duration {
	r.decay(now)
	d := floor
	if r.late > 0 {
		d = max(d, r.late+r.late/8+time.Millisecond)
	}
	ceil := maxNAKDelay
	if srtt > 0 {
		ceil = min(ceil, max(srtt, floor))
	}
	return min(d, ceil)
}
