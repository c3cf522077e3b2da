package reliability

import (
	"slices"

	"github.com/netrak/netrak/internal/rakwire"
)

// ackQueue is the receive side's record of data datagram numbers. It
// answers "is this datagram new?" (duplicates, hopelessly old numbers and
// numbers implausibly far ahead are refused), and it collects what to
// report back: ACK ranges for datagrams received, NAK ranges for gaps.
//
// Memory is bounded whatever the peer sends: a fixed bitmap of the last
// ackWindow numbers, and at most ackMaxPendingRanges pending ranges of each
// kind. A gap costs one NAK range however long it is, and nothing is ever
// expanded number by number beyond the bitmap's size.
//
// The zero value is ready; the first number expected is 0, as in RakNet.
// It reads no clock: the engine decides when to flush (RakNet ACKs within
// about 10 ms), for example by noting when pendingACK goes from 0 to 1.
//
// Use:
//
//	switch q.check(num) {
//	case ackNew: // process the frames, then
//		q.record(num) // to acknowledge it, or
//		q.refuse(num) // if a reliable frame had to be refused for room
//	default: // drop the datagram, count the verdict
//	}
//	...
//	b, err = q.appendACK(b, maxDatagram) // when the ACK timer fires
//	b, err = q.appendNAK(b, maxDatagram)
type ackQueue struct {
	next uint32                 // one past the newest number recorded
	seen [ackWindow / 64]uint64 // bit n%ackWindow: n received, for n in [next-ackWindow, next)
	acks rangeSet               // received, not yet acknowledged
	naks rangeSet               // found missing, not yet reported
	// nakOverflow counts gaps that could not be queued for a NAK because
	// the NAK list was full; the peer's retransmission timer covers them.
	nakOverflow uint64
}

const (
	// ackWindow is how many numbers below the newest are remembered for
	// duplicate detection. An older number cannot be told apart from a
	// duplicate and is refused; its frames were resent under new numbers
	// long ago.
	ackWindow = 8192
	// ackMaxAhead bounds how far past the newest number a datagram may be.
	// A peer's datagrams in flight are bounded by its congestion window;
	// a larger jump is hostile (or from another session) and is refused.
	ackMaxAhead = 1 << 15
	// ackMaxPendingRanges bounds each of the ACK and NAK lists between
	// flushes. A range is 8 bytes.
	ackMaxPendingRanges = 4096
	// ackMaxSpan bounds the distance between the oldest and newest pending
	// numbers, far inside the 2^23 that serial arithmetic can order. Only
	// an engine that never flushes gets near it.
	ackMaxSpan = 1 << 22
)

// ackVerdict is ackQueue.check's answer.
type ackVerdict uint8

const (
	// ackNew: a number not seen before.
	ackNew ackVerdict = iota
	// ackDuplicate: received before; drop the datagram.
	ackDuplicate
	// ackTooOld: more than ackWindow below the newest; drop it.
	ackTooOld
	// ackTooFarAhead: more than ackMaxAhead above the newest; drop it.
	ackTooFarAhead
	// ackListFull: the ACK list is full (the engine has not flushed);
	// drop the datagram unacknowledged, and the peer sends its reliable
	// frames again.
	ackListFull
)

func (v ackVerdict) String() string {
	switch v {
	case ackNew:
		return "new"
	case ackDuplicate:
		return "duplicate"
	case ackTooOld:
		return "too old"
	case ackTooFarAhead:
		return "too far ahead"
	case ackListFull:
		return "ack list full"
	}
	return "ackVerdict(invalid)"
}

func (q *ackQueue) bit(n uint32) (*uint64, uint64) {
	i := n % ackWindow
	return &q.seen[i/64], 1 << (i % 64)
}

// check classifies datagram number num without changing anything.
func (q *ackQueue) check(num uint32) ackVerdict {
	d := seqDiff(num&seqMask, q.next)
	switch {
	case d >= ackMaxAhead:
		return ackTooFarAhead
	case d < -ackWindow:
		return ackTooOld
	case d < 0:
		if w, m := q.bit(num); *w&m != 0 {
			return ackDuplicate
		}
	}
	if q.acks.full() || (q.acks.len() > 0 && seqDiff(num&seqMask, q.acks.r[0].Min) >= ackMaxSpan) {
		return ackListFull
	}
	return ackNew
}

// record marks num received and queues it for an ACK; a jump past the
// newest number queues the gap for a NAK, and a late number fills its place
// in a gap not yet reported. The caller has had ackNew from check(num).
func (q *ackQueue) record(num uint32) {
	q.mark(num)
	q.acks.add(num & seqMask)
}

// mark records num as seen: a late number fills its place in a gap, a
// newer one advances next and queues the numbers it skipped for a NAK.
func (q *ackQueue) mark(num uint32) {
	num &= seqMask
	d := seqDiff(num, q.next)
	if d < 0 {
		w, m := q.bit(num)
		*w |= m
		q.naks.remove(num)
		return
	}
	// Unreported gaps this old are stale; dropping them keeps the NAK
	// list within serial arithmetic's reach (the check on the ACK list
	// does the same for it).
	q.naks.dropOlderThan(seqAdd(num, seqSpace-ackMaxSpan))
	if d > 0 {
		// Numbers next..num-1 are missing: forget whatever their bitmap
		// slots held (they now stand for these numbers) and report them.
		q.clearBits(q.next, uint32(min(int(d), ackWindow)))
		if !q.naks.addRange(q.next, seqAdd(num, seqMask)) {
			q.nakOverflow++
		}
	}
	w, m := q.bit(num)
	*w |= m
	q.next = seqAdd(num, 1)
}

// refuse marks num received without acknowledging it: the datagram was
// dropped for lack of room, and the peer should resend its reliable frames
// after its retransmission timeout rather than at once. Marking it keeps a
// duplicate copy out, and keeps a NAK from asking for it. The caller has had
// ackNew from check(num).
func (q *ackQueue) refuse(num uint32) {
	q.mark(num)
}

// clearBits clears the bitmap slots of n consecutive numbers from from.
func (q *ackQueue) clearBits(from, n uint32) {
	for n > 0 {
		i := from % ackWindow
		if i%64 == 0 && n >= 64 {
			q.seen[i/64] = 0
			from, n = seqAdd(from, 64), n-64
			continue
		}
		q.seen[i/64] &^= 1 << (i % 64)
		from, n = seqAdd(from, 1), n-1
	}
}

// pendingACK and pendingNAK return how many ranges wait to be sent.
func (q *ackQueue) pendingACK() int { return q.acks.len() }
func (q *ackQueue) pendingNAK() int { return q.naks.len() }

// appendACK appends one ACK datagram of at most maxLen bytes carrying the
// oldest pending ACK ranges, and forgets them. The ranges go out in
// ascending numeric order and merged, as patched RakNet builds (the fix
// for RakNet issue #102) require: each range starts more than one above
// the previous range's end. With nothing pending, or maxLen too small for
// one range, it returns b unchanged. Call it again while pendingACK() > 0
// to send the rest. The queue holds only ranges that encode, so an error
// is a bug, after which the queue is not to be used.
func (q *ackQueue) appendACK(b []byte, maxLen int) ([]byte, error) {
	return q.acks.appendDatagram(b, len(q.acks.r), false, maxLen)
}

// appendNAK is appendACK for the missing datagrams.
func (q *ackQueue) appendNAK(b []byte, maxLen int) ([]byte, error) {
	return q.naks.appendDatagram(b, len(q.naks.r), true, maxLen)
}

// appendNAKBefore is appendNAK restricted to the gaps that end before
// cutoff (serially): the gaps old enough to report. A gap is one range,
// made by one jump in numbers, so no range straddles a cutoff taken from
// the number after a jump.
func (q *ackQueue) appendNAKBefore(b []byte, maxLen int, cutoff uint32) ([]byte, error) {
	s := &q.naks
	k := 0
	for k < len(s.r) && seqLess(s.r[k].Max, cutoff) {
		k++
	}
	return s.appendDatagram(b, k, true, maxLen)
}

// nakBefore reports whether a pending gap ends before cutoff.
func (q *ackQueue) nakBefore(cutoff uint32) bool {
	return len(q.naks.r) > 0 && seqLess(q.naks.r[0].Max, cutoff)
}

// takeACK is appendACK without the encoding: it appends to dst the ranges
// that one ACK datagram of at most maxLen bytes would carry, in the same
// ascending order, and forgets them. The engine uses it to add the
// previous ACK's ranges before encoding.
func (q *ackQueue) takeACK(dst []rakwire.Range, maxLen int) []rakwire.Range {
	return q.acks.take(dst, false, maxLen)
}

// rangeSet is a bounded set of 24-bit numbers kept as sorted, disjoint,
// non-adjacent ranges. Its values must lie within 2^23 of each other (the
// ackQueue windows guarantee it), so that serial order is a total order;
// ranges never wrap (a run through 0xffffff -> 0 is two ranges).
type rangeSet struct {
	r []rakwire.Range
}

func (s *rangeSet) len() int   { return len(s.r) }
func (s *rangeSet) full() bool { return len(s.r) >= ackMaxPendingRanges }

// search returns the index of the first range whose Max is not before n.
func (s *rangeSet) search(n uint32) int {
	lo, hi := 0, len(s.r)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if seqLess(s.r[mid].Max, n) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// adjacent reports whether b starts right after a ends, without wrapping.
func adjacent(aMax, bMin uint32) bool { return aMax != seqMask && aMax+1 == bMin }

// add inserts n and reports whether it could (false: the set is full).
func (s *rangeSet) add(n uint32) bool {
	// Fast path: numbers mostly arrive in order.
	if k := len(s.r); k > 0 && seqLess(s.r[k-1].Max, n) {
		if adjacent(s.r[k-1].Max, n) {
			s.r[k-1].Max = n
			return true
		}
		if s.full() {
			return false
		}
		s.r = append(s.r, rakwire.Range{Min: n, Max: n})
		return true
	}
	i := s.search(n)
	if i < len(s.r) && !seqLess(n, s.r[i].Min) {
		return true // already inside r[i]
	}
	joinPrev := i > 0 && adjacent(s.r[i-1].Max, n)
	joinNext := i < len(s.r) && adjacent(n, s.r[i].Min)
	switch {
	case joinPrev && joinNext:
		s.r[i-1].Max = s.r[i].Max
		s.r = append(s.r[:i], s.r[i+1:]...)
	case joinPrev:
		s.r[i-1].Max = n
	case joinNext:
		s.r[i].Min = n
	default:
		if s.full() {
			return false
		}
		s.r = append(s.r, rakwire.Range{})
		copy(s.r[i+1:], s.r[i:])
		s.r[i] = rakwire.Range{Min: n, Max: n}
	}
	return true
}

// addRange appends the run from..to (serially from <= to, and after every
// number already in the set), splitting it at the 24-bit wrap. It reports
// false if the set is full.
func (s *rangeSet) addRange(from, to uint32) bool {
	if from > to { // crosses the wrap
		return s.addRange(from, seqMask) && s.addRange(0, to)
	}
	if k := len(s.r); k > 0 && adjacent(s.r[k-1].Max, from) {
		s.r[k-1].Max = to
		return true
	}
	if s.full() {
		return false
	}
	s.r = append(s.r, rakwire.Range{Min: from, Max: to})
	return true
}

// remove deletes n if present, splitting its range if needed. A split
// past the bound is not possible: it is refused and n stays (a NAK for a
// datagram that did arrive only costs a spurious resend).
func (s *rangeSet) remove(n uint32) {
	i := s.search(n)
	if i == len(s.r) || seqLess(n, s.r[i].Min) {
		return
	}
	r := s.r[i]
	switch {
	case r.Min == n && r.Max == n:
		s.r = append(s.r[:i], s.r[i+1:]...)
	case r.Min == n:
		s.r[i].Min = n + 1
	case r.Max == n:
		s.r[i].Max = n - 1
	default:
		if s.full() {
			return
		}
		s.r = append(s.r, rakwire.Range{})
		copy(s.r[i+1:], s.r[i:])
		s.r[i].Max = n - 1
		s.r[i+1].Min = n + 1
	}
}

// dropOlderThan removes the ranges that start before n.
func (s *rangeSet) dropOlderThan(n uint32) {
	i := 0
	for i < len(s.r) && seqLess(s.r[i].Min, n) {
		i++
	}
	if i > 0 {
		k := copy(s.r, s.r[i:])
		s.r = s.r[:k]
	}
}

// ascendingPrefix reorders the oldest ranges that fit in one ACK or NAK
// datagram of at most maxLen bytes into ascending numeric order, in place,
// and returns them; the caller then drops them with dropPrefix. The set
// keeps serial order, which differs from numeric order only across the
// 24-bit wrap: [x, 0xffffff] precedes [0, y] serially, so the runs from
// the wrap on move to the front. Ranges stay merged: the set never holds
// adjacent ranges except the two halves of a run through the wrap, and
// those end up at opposite ends of the list.
func (s *rangeSet) ascendingPrefix(nak bool, maxLen int) []rakwire.Range {
	return s.ascendingPrefixOf(len(s.r), nak, maxLen)
}

// ascendingPrefixOf is ascendingPrefix among the k oldest ranges.
func (s *rangeSet) ascendingPrefixOf(k int, nak bool, maxLen int) []rakwire.Range {
	rs := s.r[:rakwire.AckFit(nak, false, s.r[:k], maxLen)]
	for k := 1; k < len(rs); k++ {
		if rs[k].Min < rs[k-1].Min {
			// Rotate rs left by k: three reversals, no allocation.
			slices.Reverse(rs[:k])
			slices.Reverse(rs[k:])
			slices.Reverse(rs)
			break
		}
	}
	return rs
}

// dropPrefix forgets the n oldest ranges.
func (s *rangeSet) dropPrefix(n int) {
	k := copy(s.r, s.r[n:])
	s.r = s.r[:k]
}

// appendDatagram writes the oldest of the k oldest ranges that fit as one
// ACK or NAK datagram, in ascending numeric order, and drops them from the
// set.
func (s *rangeSet) appendDatagram(b []byte, k int, nak bool, maxLen int) ([]byte, error) {
	rs := s.ascendingPrefixOf(k, nak, maxLen)
	if len(rs) == 0 {
		return b, nil
	}
	a := rakwire.Ack{NAK: nak, Ranges: rs}
	b, err := a.Append(b)
	if err != nil {
		return b, err
	}
	s.dropPrefix(len(rs))
	return b, nil
}

// take is appendDatagram returning the ranges instead of encoding them.
func (s *rangeSet) take(dst []rakwire.Range, nak bool, maxLen int) []rakwire.Range {
	rs := s.ascendingPrefix(nak, maxLen)
	dst = append(dst, rs...)
	s.dropPrefix(len(rs))
	return dst
}
