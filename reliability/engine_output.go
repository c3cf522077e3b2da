package reliability

import "time"

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
		b := e.appendACK(dst, now)
		e.countOut(len(b) - len(dst))
		e.stats.ACKsSent++
		return b, true
	}
	if rx := &e.rx; !rx.ackRedo.IsZero() && !now.Before(rx.ackRedo) {
		// No fresh ACK carried the last one's ranges again: repeat them
		// on their own, once. They are ascending and merged already.
		rx.ackRedo = time.Time{}
		a := Ack{Ranges: rx.ackPrev[:AckFit(false, false, rx.ackPrev, e.maxDgram)]}
		rx.ackPrev = rx.ackPrev[:0]
		b := a.Append(dst)
		e.countOut(len(b) - len(dst))
		e.stats.ACKsSent++
		return b, true
	}
	if due := e.rx.nakDue(e.nakDelay(), now); !due.IsZero() && !now.Before(due) {
		if b := t.appendNAKBefore(dst, e.maxDgram, e.rx.nakCutoff); len(b) > len(dst) {
			e.countOut(len(b) - len(dst))
			e.stats.NAKsSent++
			return b, true
		}
	}
	return e.appendData(dst, now)
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
func (e *Engine) appendACK(dst []byte, now time.Time) []byte {
	rx := &e.rx
	rx.ackFresh = rx.pipe.acks.takeACK(rx.ackFresh[:0], e.maxDgram)
	rx.ackFlush = rx.ackFlush && rx.pipe.acks.pendingACK() > 0
	ranges := mergeAscending(rx.ackMerged[:0], rx.ackFresh, rx.ackPrev)
	rx.ackMerged = ranges
	if AckFit(false, false, ranges, e.maxDgram) < len(ranges) {
		// No room for the repeat: the fresh ranges alone (they fit).
		ranges = rx.ackFresh
	}
	a := Ack{Ranges: ranges}
	b := a.Append(dst)
	rx.ackPrev = append(rx.ackPrev[:0], rx.ackFresh...)
	rx.ackRedo = now.Add(ackRepeatDelay)
	return b
}

// mergeAscending appends to dst the union of x and y, two range lists in
// ascending numeric order, itself ascending with overlapping and adjacent
// ranges merged: each range starts more than one above the previous
// range's end, as patched RakNet builds (the fix for RakNet issue #102)
// require of a range list.
func mergeAscending(dst, x, y []Range) []Range {
	start := len(dst)
	for len(x) > 0 || len(y) > 0 {
		var r Range
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

// onTimers declares datagrams lost whose retransmission timeout passed and
// checks for a dead connection.
func (e *Engine) onTimers(now time.Time) {
	for {
		d, due := e.nakWaitHead()
		if d == nil || now.Before(due) {
			break
		}
		e.nakWait.pop()
		e.lose(d, now)
	}
	rto := e.rtt.rto(&e.cfg, e.backoff)
	expired := false
	for d := e.sent.oldest(); d != nil; d = e.sent.oldest() {
		if now.Before(d.sentAt.Add(rto)) {
			break
		}
		e.lose(d, now)
		expired = true
	}
	if expired && e.backoff < 16 {
		e.backoff++
	}
	e.checkDead(now)
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
	h := DataHeader{ContinuousSend: e.backlogged, NeedsBAndAS: e.cc.inSlowStart(), Number: d.num}
	b := h.Append(dst)
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
		b = f.Append(b)
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
		b = f.Append(b)
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

	if len(b) == start+DataHeaderLen {
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

// frameFor describes part i of m; the caller sets ReliableIndex.
func (e *Engine) frameFor(m *outMsg, i uint32) Frame {
	f := Frame{
		Reliability:     m.wire,
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

// lose handles a data datagram reported missing or timed out: reliable
// frames go to the resend queue, unreliable receipts report loss.
func (e *Engine) lose(d *sentDatagram, now time.Time) {
	for i := range d.refs {
		r := &d.refs[i]
		if !r.live() {
			continue
		}
		m := r.msg
		if m.wire.IsReliable() {
			if !m.isAcked(r.part) {
				e.resend.push(*r)
			}
			continue
		}
		e.finish(m, EventLost)
	}
	e.inFlight -= d.size
	e.cc.onLoss(d.num, d.sentAt, now, e.queueing())
	e.lost.add(d.num, d.nakedAt, now)
	if !d.nakedAt.IsZero() {
		e.nakOutcome(false, 0, now)
	}
	e.stats.DatagramsLost++
	e.stats.LossRate += (1 - e.stats.LossRate) * lossWeight
	e.sent.retire(d)
}

// onNAK handles the peer's report that d is missing. A peer that reports
// gaps at once, as the original library does, reports every datagram that
// is merely overtaken on a path that reorders; once a datagram reported
// missing has been acknowledged after all, NAKs wait out the reordering
// seen that way (as RACK's reordering window does) before the datagram is
// declared lost and resent. Until then, and from peers that wait before
// reporting (this engine does), the resend is immediate.
func (e *Engine) onNAK(d *sentDatagram, now time.Time) {
	if !d.nakedAt.IsZero() {
		return // already waiting
	}
	d.nakedAt = now
	if e.nakWaitDelay(now) == 0 {
		e.lose(d, now)
		return
	}
	e.nakWait.push(d.num)
}

// nakWaitDelay is how long a NAKed datagram waits before it is declared
// lost: zero unless many NAKs have proved premature lately (more than
// prematureNAKs of them), as they do from a peer that reports gaps at
// once on a path that reorders. A peer that waits out reordering itself
// (this engine does) is premature only now and then, and then waiting
// too would only delay every real loss's resend.
func (e *Engine) nakWaitDelay(now time.Time) time.Duration {
	if e.nakPremature < prematureNAKs {
		return 0
	}
	var srtt time.Duration
	if e.rtt.hasSample {
		srtt = e.rtt.srtt
	}
	return e.nakReo.allowance(0, srtt, now)
}

// prematureNAKs is the fraction of premature NAKs above which NAKs wait;
// nakOutcomeWeight weighs each NAK's outcome in the moving average.
const (
	prematureNAKs    = 0.25
	nakOutcomeWeight = 1.0 / 16
)

// nakOutcome records whether a NAKed datagram turned out lost or only late.
func (e *Engine) nakOutcome(premature bool, late time.Duration, now time.Time) {
	if premature {
		e.nakPremature += (1 - e.nakPremature) * nakOutcomeWeight
		e.nakReo.sample(late, now)
		return
	}
	e.nakPremature -= e.nakPremature * nakOutcomeWeight
}

// nakWaitHead returns the oldest NAKed datagram still waiting and when
// its wait ends, dropping entries whose datagram was acknowledged or lost
// meanwhile; nil if none.
func (e *Engine) nakWaitHead() (*sentDatagram, time.Time) {
	for e.nakWait.len() > 0 {
		d := e.sent.lookup(*e.nakWait.peek())
		if d == nil || d.nakedAt.IsZero() {
			e.nakWait.pop()
			continue
		}
		return d, d.nakedAt.Add(e.nakWaitDelay(e.lastNow))
	}
	return nil, time.Time{}
}

// findSpurious looks for recently lost datagrams among the acknowledged
// ranges: each one found arrived after all. Its loss was reordering, not
// loss: the congestion controller takes it back, and a NAKed one teaches
// the NAK wait how late datagrams arrive. The work is at most
// lostRecords per range.
func (e *Engine) findSpurious(ranges []Range, now time.Time) {
	for i := range e.lost.recs {
		r := &e.lost.recs[i]
		if !r.valid {
			continue
		}
		if now.Sub(r.at) > reorderHold {
			r.valid = false
			e.lost.count--
			continue
		}
		for _, rg := range ranges {
			if rg.Min&seqMask <= r.num && r.num <= rg.Max&seqMask {
				r.valid = false
				e.lost.count--
				e.stats.SpuriousLosses++
				e.cc.onSpurious(r.num)
				if !r.nakedAt.IsZero() {
					e.nakOutcome(true, now.Sub(r.nakedAt), now)
				}
				break
			}
		}
	}
}

// lostRecords is how many recent losses are remembered for spotting
// spurious ones.
const lostRecords = 32

// lostLog remembers the last lostRecords datagrams declared lost.
type lostLog struct {
	recs [lostRecords]struct {
		num     uint32
		nakedAt time.Time // zero: timed out
		at      time.Time // when declared lost
		valid   bool
	}
	next  int
	count int
}

func (l *lostLog) add(num uint32, nakedAt, now time.Time) {
	r := &l.recs[l.next]
	if !r.valid {
		l.count++
	}
	r.num, r.nakedAt, r.at, r.valid = num, nakedAt, now, true
	l.next = (l.next + 1) % lostRecords
}

// queueing reports whether the path shows queueing delay (see
// rttEstimator.queueing). The allowance is half the ACK delay: the peer
// holds an acknowledgement up to about that long, so samples vary by it;
// the minimum of a window of them mostly catches one that was not held,
// but the base may come from one that was (a burst sent at once is
// acknowledged together). A whole ACK delay hid a 20 ms standing queue in
// the harness's capped link (scenario a); half of it did not, and took no
// jitter for queueing in scenarios b, d, f and i.
func (e *Engine) queueing() bool { return e.rtt.queueing(e.cfg.ACKDelay / 2) }

// acked handles a data datagram the peer acknowledged.
func (e *Engine) acked(d *sentDatagram, now time.Time) {
	for i := range d.refs {
		r := &d.refs[i]
		if !r.live() {
			continue
		}
		m := r.msg
		if !m.wire.IsReliable() {
			e.finish(m, EventAcked)
			continue
		}
		if m.isAcked(r.part) {
			continue
		}
		m.setAcked(r.part)
		e.rel.ack(r.relIndex)
		m.unacked--
		if m.unacked == 0 {
			e.finish(m, EventAcked)
		}
	}
	if !d.nakedAt.IsZero() {
		// NAKed, then acknowledged while its NAK waited out the
		// reordering allowance: the peer reports gaps sooner than the
		// path reorders.
		e.nakOutcome(true, now.Sub(d.nakedAt), now)
	}
	e.inFlight -= d.size
	e.cc.onAck(d.size, d.sentAt, now, e.queueing(), e.rtt.baseShare())
	e.stats.LossRate -= e.stats.LossRate * lossWeight
	e.sent.retire(d)
}

// onAckDatagram applies a parsed ACK or NAK. The work is bounded by the
// in-flight window, whatever the ranges claim: each range is intersected
// with the window and only the intersection is visited, and the total
// visited across all ranges may not exceed the window's span.
func (e *Engine) onAckDatagram(a *Ack, now time.Time) {
	// Each number may be named twice (ACKs repeat the previous ACK's
	// ranges), so an honest ACK visits at most twice the window.
	budget := 2*e.sent.span() + len(a.Ranges)
	var newest *sentDatagram
	var newestAt time.Time
	progress := false
	for _, rg := range a.Ranges {
		span := e.sent.span()
		if span == 0 {
			break
		}
		// The window base..base+span-1 may wrap past 2^24-1: at most two
		// numeric segments.
		segs := [2][2]uint32{{e.sent.base, 0}, {0, 0}}
		n := 1
		if end := int(e.sent.base) + span - 1; end < seqSpace {
			segs[0][1] = uint32(end)
		} else {
			segs[0][1] = seqMask
			segs[1] = [2]uint32{0, uint32(end - seqSpace)}
			n = 2
		}
		for _, s := range segs[:n] {
			lo, hi := max(rg.Min&seqMask, s[0]), min(rg.Max&seqMask, s[1])
			for num := lo; lo <= hi && num <= hi; num++ {
				if budget--; budget < 0 {
					e.stats.Drops.ACKWorkExceeded++
					goto done
				}
				d := e.sent.lookup(num)
				if d == nil {
					continue
				}
				if a.NAK {
					e.onNAK(d, now)
					continue
				}
				if newest == nil || d.sentAt.After(newestAt) {
					newest, newestAt = d, d.sentAt
				}
				e.acked(d, now)
				progress = true
			}
		}
	}
done:
	if !a.NAK && e.lost.count > 0 {
		e.findSpurious(a.Ranges, now)
	}
	if newest != nil {
		e.rtt.update(now.Sub(newestAt), now)
	}
	if progress {
		e.backoff = 0
		e.progressAt = now
	}
}
