package reliability

import (
	"time"

	"github.com/netrak/netrak/internal/rakwire"
)

// The sender's side of acknowledgement: what becomes of the data
// datagrams this side sent. The peer's ACKs and NAKs, and retransmission
// timeouts, settle each one as delivered or lost; that feeds receipts, the
// resend queue, the RTT estimate and the congestion controller, and a
// datagram declared lost and acknowledged afterwards undoes its loss.
// Building datagrams is engine_output.go's job.

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
func (e *Engine) findSpurious(ranges []rakwire.Range, now time.Time) {
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
func (e *Engine) onAckDatagram(a *rakwire.Ack, now time.Time) {
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
