package reliability

import (
	"slices"
	"time"
)

// Receive-side building blocks of the engine: which datagram numbers
// arrived (for ACKs, NAKs and duplicate detection), which reliable message
// indexes were delivered, split reassembly with limits, and per-channel
// ordering and sequencing.

// dgramTracker remembers the datagram numbers seen in a window below the
// next expected one and collects the numbers to ACK and to NAK.
type dgramTracker struct {
	started  bool
	expect   uint32 // one past the newest number seen
	seen     [dgramWindow / 64]uint64
	ackNums  []uint32
	ackSince time.Time
	nakNums  []uint32
	prevAck  []uint32 // numbers of the last ACK, repeated once in the next
	scratch  []uint32
	ranges   []Range
}

const (
	dgramWindow = 4096
	// maxNakGap: a jump larger than this NAKs only its newest part, as the
	// original library does (it caps skipped counts at 1000).
	maxNakGap = 1000
	// maxPendingNums bounds ACK and NAK lists between flushes.
	maxPendingNums = 8192
	// ackFlushCount: this many pending ACKs are sent without waiting.
	ackFlushCount = 256
)

func (t *dgramTracker) bit(n uint32) (*uint64, uint64) {
	i := n & (dgramWindow - 1)
	return &t.seen[i>>6], 1 << (i & 63)
}

// fresh reports whether num has not been seen, without recording it.
func (t *dgramTracker) fresh(num uint32) bool {
	if !t.started {
		return true
	}
	d := seqDiff(num, t.expect)
	if d >= 0 {
		return true
	}
	if d < -dgramWindow {
		return false // too old to tell; its frames were resent long ago
	}
	w, m := t.bit(num)
	return *w&m == 0
}

// full reports whether the pending lists reached their bound.
func (t *dgramTracker) full() bool {
	return len(t.ackNums) >= maxPendingNums || len(t.nakNums) >= maxPendingNums
}

// record marks num as received, queues its ACK and NAKs any gap before it.
// The caller checked fresh(num).
func (t *dgramTracker) record(num uint32, now time.Time) {
	if !t.started {
		t.started = true
		t.expect = num
	}
	if len(t.ackNums) == 0 {
		t.ackSince = now
	}
	t.ackNums = append(t.ackNums, num)
	d := seqDiff(num, t.expect)
	if d < 0 {
		w, m := t.bit(num)
		*w |= m
		if i := slices.Index(t.nakNums, num); i >= 0 {
			t.nakNums = slices.Delete(t.nakNums, i, i+1)
		}
		return
	}
	// Numbers from expect to num-1 are missing: clear their slots, NAK
	// the most recent maxNakGap of them.
	for i := int32(0); i < d && i < dgramWindow; i++ {
		w, m := t.bit(num - uint32(i) - 1)
		*w &^= m
	}
	for i := min(d, maxNakGap); i > 0 && len(t.nakNums) < maxPendingNums; i-- {
		t.nakNums = append(t.nakNums, seqAdd(num, uint32(seqSpace-int(i))))
	}
	w, m := t.bit(num)
	*w |= m
	t.expect = seqAdd(num, 1)
}

func (t *dgramTracker) ackDue(delay time.Duration) time.Time {
	if len(t.ackNums) == 0 {
		return time.Time{}
	}
	if len(t.ackNums) >= ackFlushCount {
		return t.ackSince
	}
	return t.ackSince.Add(delay)
}

// appendList writes an ACK or NAK of as many pending numbers as fit in
// maxLen and keeps the rest pending. An ACK repeats the numbers of the
// previous ACK once, so that one lost ACK does not make the peer resend
// (the original library acknowledges each datagram once; repeating costs a
// few bytes, as the runs are mostly contiguous and coalesce).
func (t *dgramTracker) appendList(dst []byte, nums *[]uint32, nak bool, maxLen int) []byte {
	slices.Sort(*nums)
	list := *nums
	if !nak && len(t.prevAck) > 0 {
		t.scratch = append(append(t.scratch[:0], *nums...), t.prevAck...)
		slices.Sort(t.scratch)
		list = t.scratch
	}
	t.ranges = CoalesceRanges(t.ranges[:0], list)
	n := AckFit(nak, false, t.ranges, maxLen)
	if !nak {
		t.prevAck = append(t.prevAck[:0], *nums...)
	}
	a := Ack{NAK: nak, Ranges: t.ranges[:n]}
	dst = a.Append(dst)
	if n == len(t.ranges) {
		*nums = (*nums)[:0]
		return dst
	}
	last := t.ranges[n-1].Max
	i, _ := slices.BinarySearch(*nums, last+1)
	*nums = append((*nums)[:0], (*nums)[i:]...)
	return dst
}

// relDedup remembers which reliable message indexes were accepted, in a
// window above the lowest not yet seen.
type relDedup struct {
	low  uint32
	bits [relDedupWindow / 64]uint64
}

// relDedupWindow matches the Minecraft Bedrock client's tolerance: an
// index more than 32768 past the lowest missing one is refused.
const relDedupWindow = 32768

// check returns 0 for a new index, 1 for a duplicate, 2 for one too far
// ahead to remember.
func (r *relDedup) check(i uint32) int {
	d := seqDiff(i, r.low)
	switch {
	case d < 0:
		return 1
	case d >= relDedupWindow:
		return 2
	}
	b := i & (relDedupWindow - 1)
	if r.bits[b>>6]&(1<<(b&63)) != 0 {
		return 1
	}
	return 0
}

func (r *relDedup) mark(i uint32) {
	b := i & (relDedupWindow - 1)
	r.bits[b>>6] |= 1 << (b & 63)
	for {
		b := r.low & (relDedupWindow - 1)
		if r.bits[b>>6]&(1<<(b&63)) == 0 {
			return
		}
		r.bits[b>>6] &^= 1 << (b & 63)
		r.low = seqAdd(r.low, 1)
	}
}

// assembly is a split message being reassembled.
type assembly struct {
	count    uint32
	got      uint32
	reserved int
	size     int
	parts    [][]byte
	frame    Frame // header fields of the message (Payload unused)
}

// assembler reassembles split messages within limits: parts per message,
// messages at once, and bytes reserved (count × largest part) at once.
type assembler struct {
	byID     map[uint16]*assembly
	free     []*assembly
	reserved int
	held     int
}

// orderChannel is one ordering channel's receive state. held[k] holds what
// waits for ordering index next+k: the ordered message with that index and
// the newest sequenced message sent just before it.
type orderChannel struct {
	next       uint32 // next ordering index to deliver
	highestSeq uint32 // next acceptable sequencing index for next
	held       []heldSlot
	heldCount  int
}

type heldMsg struct {
	buf  []byte // nil: empty
	kind Reliability
	seq  uint32
}

type heldSlot struct {
	ord, seq heldMsg
}

// maxOrderAhead bounds how far past the next expected ordering index a
// message is held (the Bedrock client holds 4097).
const maxOrderAhead = 4096

// rxState is the engine's receive side.
type rxState struct {
	track  dgramTracker
	dedup  relDedup
	asm    assembler
	ch     [NumOrderingChannels]orderChannel
	out    fifo[Message]
	queued int    // bytes delivered but unread, plus bytes held for ordering
	last   []byte // payload returned by the previous ReadMessage
}

func (r *rxState) reassemblyBytes() int { return r.asm.held }

func (c *orderChannel) slot(idx uint32) *heldSlot {
	return &c.held[int(idx)&(len(c.held)-1)]
}

// ensure makes room to hold index next+d (d < maxOrderAhead).
func (c *orderChannel) ensure(d int) {
	if d < len(c.held) {
		return
	}
	n := max(len(c.held), 16)
	for n <= d {
		n *= 2
	}
	nh := make([]heldSlot, n)
	for k := 0; k < len(c.held); k++ {
		idx := seqAdd(c.next, uint32(k))
		nh[int(idx)&(n-1)] = *c.slot(idx)
	}
	c.held = nh
}
