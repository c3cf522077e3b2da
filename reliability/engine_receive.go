package reliability

import "time"

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
	switch ClassifyDatagram(b) {
	case DatagramACK, DatagramNAK:
		if err := ParseAck(b, &e.ackScratch); err != nil {
			e.stats.Drops.MalformedACK++
			return
		}
		if e.ackScratch.NAK {
			e.stats.NAKsReceived++
		} else {
			e.stats.ACKsReceived++
		}
		e.onAckDatagram(&e.ackScratch, now)
	case DatagramData:
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
	if rx.pendingBytes() >= e.cfg.MaxReceiveBytes {
		// The application is not reading: refuse the datagram, unacknowledged,
		// so the peer slows down and resends later.
		e.stats.Drops.ReceiveQueueFull++
		return
	}
	pending, naks := rx.pipe.acks.pendingACK(), rx.pipe.acks.pendingNAK()
	var acked bool
	rx.ready, acked = rx.pipe.receiveDatagram(rx.ready[:0], b)
	if acked && pending == 0 {
		rx.ackSince = now
	}
	if naks == 0 && rx.pipe.acks.pendingNAK() > 0 {
		rx.nakSince = now
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
	ackSince  time.Time     // when the oldest pending ACK range was queued
	nakSince  time.Time     // when the NAK list last became non-empty
	ackFresh  []Range       // scratch: the pending ranges the next ACK carries
	ackPrev   []Range       // ranges of the previous ACK, to be repeated once
	ackMerged []Range       // scratch: fresh and repeated ranges, merged
	ackRedo   time.Time     // when to repeat ackPrev on its own; zero: no need
	ready     []recvMessage // scratch for recvPipeline.receiveDatagram
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

// nakDue returns when the pending NAKs go out; zero if none. A gap waits
// nakDelay first: a datagram that was only overtaken (jitter reorders)
// fills it meanwhile and is never reported, so the peer does not resend it
// for nothing and take the reordering for congestion.
func (r *rxState) nakDue(delay time.Duration) time.Time {
	if r.pipe.acks.pendingNAK() == 0 {
		return time.Time{}
	}
	return r.nakSince.Add(delay)
}

// ackDue returns when the pending ACKs must go out; zero if none.
func (r *rxState) ackDue(delay time.Duration) time.Time {
	switch n := r.pipe.acks.pendingACK(); {
	case n == 0:
		return time.Time{}
	case n >= ackFlushRanges:
		return r.ackSince
	}
	return r.ackSince.Add(delay)
}
