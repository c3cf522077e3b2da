package reliability

import (
	"time"

	"github.com/netrak/netrak/internal/rakwire"
)

// AppendDatagram appends the next datagram to send to dst and returns it
// with true, or returns dst unchanged and false when nothing is due now.
// Call it in a loop until it returns false, writing each datagram out,
// after every Receive and whenever NextTimeout passes. It also runs the
// timers: retransmission timeouts, delayed ACKs and the dead-connection
// check.
//
// Order: a due ACK, then NAKs, then data (resends before new frames)
// within the congestion window and the pacer's budget.
func (e *Engine) AppendDatagram(dst []byte, now time.Time) ([]byte, bool) {
	if e.closed || e.dead {
		return dst, false
	}
	e.observe(now)
	e.onTimers(now)
	if e.dead {
		return dst, false
	}
	t := &e.rx.pipe.acks
	if due := e.rx.ackDue(e.cfg.ACKDelay); !due.IsZero() && !now.Before(due) {
		b, err := e.appendACK(dst, now)
		return e.control(dst, b, err, &e.stats.ACKsSent)
	}
	if rx := &e.rx; !rx.ackRedo.IsZero() && !now.Before(rx.ackRedo) {
		// No fresh ACK carried the last one's ranges again: repeat them
		// on their own, once. They are ascending and merged already.
		rx.ackRedo = time.Time{}
		a := rakwire.Ack{Ranges: rx.ackPrev[:rakwire.AckFit(false, false, rx.ackPrev, e.maxDgram)]}
		rx.ackPrev = rx.ackPrev[:0]
		b, err := a.Append(dst)
		return e.control(dst, b, err, &e.stats.ACKsSent)
	}
	if due := e.rx.nakDue(e.nakDelay(), now); !due.IsZero() && !now.Before(due) {
		if b, err := t.appendNAKBefore(dst, e.maxDgram, e.rx.nakCutoff); err != nil || len(b) > len(dst) {
			return e.control(dst, b, err, &e.stats.NAKsSent)
		}
	}
	return e.appendData(dst, now)
}

// control completes AppendDatagram with an ACK or NAK datagram: b is dst
// with it appended, unless encoding it failed.
func (e *Engine) control(dst, b []byte, err error, count *uint64) ([]byte, bool) {
	if err != nil {
		e.broken(err)
		return dst, false
	}
	e.countOut(len(b) - len(dst))
	*count++
	return b, true
}

// appendACK appends an ACK carrying the pending ranges that fit, merged
// with the ranges of the previous ACK as room allows, so that every
// datagram number is acknowledged twice: one lost ACK then no longer
// makes the peer time out and resend datagrams that arrived. If no fresh
// ACK follows within ackRepeatDelay, the ranges are repeated on their own.
// The original library acknowledges once; a peer ignores acknowledgements
// of numbers it no longer tracks, and the ranges are mostly contiguous, so
// the repeat costs a few bytes. Under heavy loss it matters: when the peer
// is backing off and sends one datagram per timeout, each exchange
// otherwise hangs on a single ACK.
//
// Both lists come out of the ackQueue ascending and merged, so one linear
// merge keeps the result so.
func (e *Engine) appendACK(dst []byte, now time.Time) ([]byte, error) {
	rx := &e.rx
	rx.ackFresh = rx.pipe.acks.takeACK(rx.ackFresh[:0], e.maxDgram)
	rx.ackFlush = rx.ackFlush && rx.pipe.acks.pendingACK() > 0
	ranges := mergeAscending(rx.ackMerged[:0], rx.ackFresh, rx.ackPrev)
	rx.ackMerged = ranges
	if rakwire.AckFit(false, false, ranges, e.maxDgram) < len(ranges) {
		// No room for the repeat: the fresh ranges alone (they fit).
		ranges = rx.ackFresh
	}
	a := rakwire.Ack{Ranges: ranges}
	b, err := a.Append(dst)
	rx.ackPrev = append(rx.ackPrev[:0], rx.ackFresh...)
	rx.ackRedo = now.Add(ackRepeatDelay)
	return b, err
}

// mergeAscending appends to dst the union of x and y, two range lists in
// ascending numeric order, itself ascending with overlapping and adjacent
// ranges merged: each range starts more than one above the previous
// range's end, as patched RakNet builds (the fix for RakNet issue #102)
// require of a range list.
func mergeAscending(dst, x, y []rakwire.Range) []rakwire.Range {
	start := len(dst)
	for len(x) > 0 || len(y) > 0 {
		var r rakwire.Range
		if len(y) == 0 || (len(x) > 0 && x[0].Min <= y[0].Min) {
			r, x = x[0], x[1:]
		} else {
			r, y = y[0], y[1:]
		}
		if n := len(dst); n > start && r.Min <= dst[n-1].Max+1 {
			dst[n-1].Max = max(dst[n-1].Max, r.Max)
			continue
		}
		dst = append(dst, r)
	}
	return dst
}

// nakDelay is how long a gap in the received datagram numbers waits before
// it is reported: a reordering allowance of at least twice the ACK delay,
// raised to what the path's reordering has recently needed (see
// reorderTracker).
func (e *Engine) nakDelay() time.Duration {
	var srtt time.Duration
	if e.rtt.hasSample {
		srtt = e.rtt.srtt
	}
	return e.rx.reorder.allowance(2*e.cfg.ACKDelay, srtt, e.lastNow)
}

// ackRepeatDelay is how long an ACK waits for a fresh one to carry its
// ranges again before it is repeated on its own.
const ackRepeatDelay = 40 * time.Millisecond

func (e *Engine) countOut(n int) {
	e.stats.DatagramsSent++
	e.stats.BytesSent += uint64(n)
}

// appendData builds one data datagram from resends and queued messages.
func (e *Engine) appendData(dst []byte, now time.Time) ([]byte, bool) {
	if e.resend.len() == 0 && e.queuedMsgs == 0 {
		e.backlogged = false
	}
	if !e.hasDataToSend() || e.sent.span() >= maxInFlightDatagrams || !e.cc.canSend(e.inFlight, e.maxDgram) {
		return dst, false
	}
	rate := e.cc.pacingRate(e.rtt.srtt, e.rtt.hasSample)
	e.cc.refill(now, rate)
	if at := e.cc.paced(now, e.maxDgram, rate); !at.IsZero() {
		e.paceAt = at
		return dst, false
	}
	e.paceAt = time.Time{}

	if !e.outstanding() {
		e.progressAt = now
	}
	start := len(dst)
	d := e.sent.add(now)
	// The header flags mean what the original library means by them:
	// continuous send, the previous datagram left data waiting (so the
	// gap before this one says nothing about the path's capacity); needs
	// B and AS, the sender is in slow start. It sends 0x84 for the first
	// datagram of a burst and 0x8c for the rest.
	h := rakwire.DataHeader{ContinuousSend: e.backlogged, NeedsBAndAS: e.cc.inSlowStart(), Number: d.num}
	b, err := h.Append(dst)
	if err != nil {
		e.broken(err)
		return dst, false
	}
	limit := start + e.maxDgram

	// Resends first: they are the oldest data and hold up the peer's
	// ordering channels.
	for e.resend.len() > 0 {
		ref := e.resend.peek()
		m := ref.msg
		if !ref.live() || m.isAcked(ref.part) {
			e.resend.pop()
			continue
		}
		f := e.frameFor(m, ref.part)
		f.ReliableIndex = ref.relIndex
		if len(b)+f.Len() > limit {
			break
		}
		if b, err = f.Append(b); err != nil {
			e.broken(err)
			return dst, false
		}
		d.refs = append(d.refs, e.resend.pop())
		e.stats.Resends++
		e.stats.FramesSent++
	}

	// New frames, by priority.
	var skip [numPriorities]bool
	for {
		p, ok := e.nextClass(&skip)
		if !ok {
			break
		}
		m := *e.queues[p].peek()
		f := e.frameFor(m, m.nextPart)
		if len(b)+f.Len() > limit {
			skip[p] = true
			continue
		}
		if m.wire.IsReliable() {
			f.ReliableIndex = e.rel.assign()
		}
		if m.split && m.nextPart == 0 {
			m.splitID = e.nextSplitID
			f.SplitID = m.splitID
			e.nextSplitID++
			e.splitsOut++
		}
		if b, err = f.Append(b); err != nil {
			e.broken(err)
			return dst, false
		}
		e.stats.FramesSent++
		if p != Immediate {
			e.credits[p]--
		}
		part := m.nextPart
		if part == 0 && m.wire.IsReliable() && m.wire.HasOrderingChannel() {
			e.recordSent(m)
		}
		m.nextPart++
		done := m.nextPart == m.parts
		if done {
			e.queues[p].pop()
			e.queuedMsgs--
		}
		switch {
		case m.wire.IsReliable():
			d.refs = append(d.refs, frameRef{msg: m, gen: m.gen, part: part, relIndex: f.ReliableIndex})
		case m.kind.WantsReceipt():
			d.refs = append(d.refs, frameRef{msg: m, gen: m.gen, part: part})
		case done:
			e.release(m) // unreliable: the bytes are on the wire, nothing to wait for
		}
	}

	if len(b) == start+rakwire.DataHeaderLen {
		// Nothing fitted after all (every candidate was skipped): undo.
		e.sent.next = d.num
		d.inFlight = false
		e.sent.count--
		return dst, false
	}
	d.size = len(b) - start
	e.backlogged = e.resend.len() > 0 || e.queuedMsgs > 0
	e.inFlight += d.size
	e.cc.spend(d.size)
	e.countOut(d.size)
	return b, true
}

// nextClass picks the priority class that supplies the next frame:
// Immediate first, then High, Medium and Low by weighted round robin.
func (e *Engine) nextClass(skip *[numPriorities]bool) (Priority, bool) {
	ready := func(p Priority) bool {
		return e.queues[p].len() > 0 && e.sendable(*e.queues[p].peek())
	}
	if !skip[Immediate] && ready(Immediate) {
		return Immediate, true
	}
	for round := 0; round < 2; round++ {
		owed, any := false, false
		for p := High; p < numPriorities; p++ {
			if !ready(p) {
				continue
			}
			if e.credits[p] > 0 {
				if !skip[p] {
					return p, true
				}
				owed = true // its turn, but its frame does not fit here
			}
			any = any || !skip[p]
		}
		if owed || !any {
			return 0, false
		}
		e.credits = priorityWeights // every backlogged class spent its turn: new round
	}
	return 0, false
}

// frameFor describes part i of m; the caller sets ReliableIndex. Send cut
// the parts to fit a datagram and the indexes are 24-bit, so the frame
// encodes.
func (e *Engine) frameFor(m *outMsg, i uint32) rakwire.Frame {
	f := rakwire.Frame{
		Reliability:     rakwire.Reliability(m.wire),
		OrderingIndex:   m.orderingIndex,
		SequencingIndex: m.sequencingIndex,
		OrderingChannel: m.channel,
		Payload:         m.part(i),
	}
	if m.split {
		f.Split = true
		f.SplitCount = m.parts
		f.SplitID = m.splitID
		f.SplitIndex = i
	}
	return f
}
