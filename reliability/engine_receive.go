package reliability

import (
	"time"

	"github.com/netrak/netrak/internal/rakwire"
)

// Receive processes one datagram from the peer: an ACK, a NAK or a data
// datagram. Malformed, duplicate and hostile input is dropped and counted
// in Stats().Drops; it never produces an error or a reply beyond an ACK.
// b is not retained. Call AppendDatagram afterwards: the datagram may
// have made ACKs, NAKs or resends due.
func (e *Engine) Receive(b []byte, now time.Time) {
	e.observe(now)
	e.stats.DatagramsReceived++
	e.stats.BytesReceived += uint64(len(b))
	if e.closed || e.dead {
		e.stats.Drops.DeadInput++
		return
	}
	switch rakwire.ClassifyDatagram(b) {
	case rakwire.DatagramACK, rakwire.DatagramNAK:
		if _, err := rakwire.ParseAck(b, &e.ackScratch); err != nil {
			e.stats.Drops.MalformedACK++
			return
		}
		e.heardAt = now
		if e.ackScratch.NAK {
			e.stats.NAKsReceived++
		} else {
			e.stats.ACKsReceived++
		}
		e.onAckDatagram(&e.ackScratch, now)
	case rakwire.DatagramData:
		if len(b) >= rakwire.DataHeaderLen {
			e.heardAt = now
		}
		e.receiveData(b, now)
	default:
		e.stats.Drops.MalformedDatagram++
	}
}

func (e *Engine) receiveData(b []byte, now time.Time) {
	rx := &e.rx
	if len(b) > e.maxDgram {
		e.stats.Drops.MalformedDatagram++
		return
	}
	if rx.queued >= e.cfg.MaxReceiveBytes {
		// The application is not reading: refuse the datagram, unacknowledged,
		// so the peer slows down and resends later. Messages held for
		// ordering do not count here (the ordering channels bound them
		// themselves, and always accept the message a channel waits for):
		// refusing the datagram that fills an ordering gap because of the
		// messages waiting behind that gap would stall the channel for good.
		e.stats.Drops.ReceiveQueueFull++
		return
	}
	pending := rx.pipe.acks.pendingACK()
	next := rx.pipe.acks.next
	var acked bool
	rx.ready, acked = rx.pipe.receiveDatagram(rx.ready[:0], b)
	if acked && len(b) >= rakwire.DataHeaderLen {
		rx.reorder.arrived(uint32(b[1])|uint32(b[2])<<8|uint32(b[3])<<16, next, now)
	}
	if acked && pending == 0 {
		rx.ackSince = now
	}
	if after := rx.pipe.acks.next; seqDiff(after, next) > 1 {
		rx.gapOpened(after, now)
	}
	for i := range rx.ready {
		m := &rx.ready[i]
		p := m.Payload
		if !m.Owned {
			p = e.pool.get(len(m.Payload)) // m.Payload aliases b
			copy(p, m.Payload)
		}
		rx.queued += len(p)
		rx.out.push(Message{Payload: p, Reliability: m.Reliability, Channel: m.Channel})
		m.Payload = nil
	}
}

// ReadMessage returns the next delivered message. Its Payload stays valid
// until the next ReadMessage or Close; copy it to keep it longer.
func (e *Engine) ReadMessage() (Message, bool) {
	if e.rx.last != nil {
		e.pool.put(e.rx.last)
		e.rx.last = nil
	}
	if e.closed || e.rx.out.len() == 0 {
		return Message{}, false
	}
	m := e.rx.out.pop()
	e.rx.queued -= len(m.Payload)
	e.rx.last = m.Payload
	e.stats.MessagesDelivered++
	return m, true
}

// Receive-side state of the engine: a recvPipeline (datagram tracking,
// dedup, reassembly, ordering) and the queue of delivered messages.

// rxState is the engine's receive side.
type rxState struct {
	pipe      recvPipeline
	ackSince  time.Time         // when the oldest pending ACK range was queued
	gaps      [gapMarks]gapMark // when recent gaps opened, oldest first from gapHead
	gapHead   int
	gapLen    int
	nakCutoff uint32          // gaps ending before it are old enough to NAK
	ackFresh  []rakwire.Range // scratch: the pending ranges the next ACK carries
	ackPrev   []rakwire.Range // ranges of the previous ACK, to be repeated once
	ackMerged []rakwire.Range // scratch: fresh and repeated ranges, merged
	ackRedo   time.Time       // when to repeat ackPrev on its own; zero: no need
	ackFlush  bool            // FlushACKs: the pending ranges are due now
	ready     []recvMessage   // scratch for recvPipeline.receiveDatagram
	reorder   reorderTracker
	out       fifo[Message]
	queued    int    // bytes delivered but not yet read
	last      []byte // payload returned by the previous ReadMessage
}

// pendingBytes is what the receive side holds for the application:
// delivered but unread, and held for ordering.
func (r *rxState) pendingBytes() int {
	_, held := r.pipe.order.held()
	return r.queued + held
}

// ackFlushRanges: this many pending ACK ranges go out without waiting for
// the ACK delay (scattered arrivals, as under heavy loss).
const ackFlushRanges = 64

// gapMark says that the gaps in received numbers ending before upTo
// were all open by at.
type gapMark struct {
	at   time.Time
	upTo uint32
}

// gapMarks bounds the gap history; when it is full the newest mark is
// moved forward instead, which only makes a few gaps wait a little longer.
const gapMarks = 64

// gapOpened records that a datagram jumped the numbers so that next is
// upTo, opening a gap, at now.
func (r *rxState) gapOpened(upTo uint32, now time.Time) {
	if r.gapLen == gapMarks {
		r.gaps[(r.gapHead+r.gapLen-1)%gapMarks].upTo = upTo
		return
	}
	r.gaps[(r.gapHead+r.gapLen)%gapMarks] = gapMark{at: now, upTo: upTo}
	r.gapLen++
}

// nakDue returns when the pending NAKs go out; zero if none. Each gap waits
// delay after it opened: a datagram that was only overtaken (reordering)
// fills it meanwhile and is never reported, so the peer does not resend it
// for nothing. It advances nakCutoff over the gaps that have waited enough
// by now.
func (r *rxState) nakDue(delay time.Duration, now time.Time) time.Time {
	q := &r.pipe.acks
	if q.pendingNAK() == 0 {
		// Every gap is filled or reported: forget the marks, and keep the
		// cutoff current so that it stays comparable (within 2^23) with
		// the numbers to come.
		r.gapLen = 0
		r.nakCutoff = q.next
		return time.Time{}
	}
	for r.gapLen > 0 && !now.Before(r.gaps[r.gapHead].at.Add(delay)) {
		r.nakCutoff = r.gaps[r.gapHead].upTo
		r.gapHead = (r.gapHead + 1) % gapMarks
		r.gapLen--
	}
	switch {
	case q.nakBefore(r.nakCutoff):
		return now
	case r.gapLen > 0:
		return r.gaps[r.gapHead].at.Add(delay)
	}
	// Pending gaps no mark covers: none should exist; report them all.
	r.nakCutoff = q.next
	return now
}

// ackDue returns when the pending ACKs must go out; zero if none.
func (r *rxState) ackDue(delay time.Duration) time.Time {
	switch n := r.pipe.acks.pendingACK(); {
	case n == 0:
		r.ackFlush = false
		return time.Time{}
	case n >= ackFlushRanges || r.ackFlush:
		return r.ackSince
	}
	return r.ackSince.Add(delay)
}
