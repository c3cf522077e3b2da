package reliability

import (
	"io"
	"time"
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
	if len(b) > e.maxDgram {
		e.stats.Drops.MalformedDatagram++
		return
	}
	h, fr, err := ParseDataDatagram(b)
	if err != nil {
		e.stats.Drops.MalformedDatagram++
		return
	}
	rx := &e.rx
	switch rx.track.check(h.Number) {
	case ackDuplicate, ackTooOld:
		e.stats.Drops.DuplicateDatagram++
		return
	case ackTooFarAhead:
		e.stats.Drops.DatagramOutOfWindow++
		return
	case ackListFull:
		e.stats.Drops.ReceiveQueueFull++
		return
	}
	if rx.pendingBytes() >= e.cfg.MaxReceiveBytes {
		e.stats.Drops.ReceiveQueueFull++
		return
	}
	refused := false
	var f Frame
	for {
		err := fr.Next(&f)
		if err == io.EOF {
			break
		}
		if fr.Skippable(err) {
			e.stats.Drops.InvalidFrame++
			continue
		}
		if err != nil {
			e.stats.Drops.MalformedDatagram++
			break
		}
		if e.receiveFrame(&f) {
			refused = true
		}
	}
	if refused {
		// Something could not be held: leave the datagram unacknowledged
		// so the peer sends its reliable frames again later. Frames
		// accepted from it are remembered and will be deduplicated.
		return
	}
	if rx.track.pendingACK() == 0 {
		rx.ackSince = now
	}
	rx.track.record(h.Number)
}

// receiveFrame processes one frame. It reports true when a reliable frame
// was refused for lack of room, so the datagram must not be acknowledged.
func (e *Engine) receiveFrame(f *Frame) (refused bool) {
	rx := &e.rx
	k := f.Reliability.WireKind() // receipt kinds arrive as their plain kinds
	f.Reliability = k
	if k.IsReliable() {
		switch rx.dedup.check(f.ReliableIndex) {
		case windowDuplicate:
			e.stats.Drops.DuplicateMessage++
			return false
		case windowTooFarAhead:
			e.stats.Drops.OrderingOverflow++
			return true
		}
	}
	if k.HasOrderingChannel() {
		size := len(f.Payload)
		if f.Split {
			size = 0 // parts are charged to reassembly, the whole at the end
		}
		switch rx.ord.check(f, size) {
		case orderTooFarAhead, orderHoldFull, orderBadChannel:
			e.stats.Drops.OrderingOverflow++
			return k.IsReliable()
		case orderStale:
			e.markReliable(k, f)
			e.stats.Drops.StaleSequenced++
			return false
		case orderDuplicate:
			e.markReliable(k, f)
			e.stats.Drops.DuplicateMessage++
			return false
		}
	}
	if !f.Split {
		e.markReliable(k, f)
		e.deliver(f, f.Payload, false)
		return false
	}
	msg, v := rx.asm.add(f)
	if v.transient() {
		e.stats.Drops.SplitRejected++
		return k.IsReliable()
	}
	e.markReliable(k, f)
	switch v {
	case splitPending:
	case splitDuplicate:
		e.stats.Drops.DuplicateMessage++
	case splitComplete:
		e.deliver(f, msg, true)
	default:
		e.stats.Drops.SplitRejected++
	}
	return false
}

func (e *Engine) markReliable(k Reliability, f *Frame) {
	if k.IsReliable() {
		e.rx.dedup.mark(f.ReliableIndex)
	}
}

// deliver passes a complete message through ordering and sequencing and
// queues whatever that releases for ReadMessage. owned says payload is a
// buffer the engine may keep; otherwise it aliases the datagram and is
// copied if kept.
func (e *Engine) deliver(f *Frame, payload []byte, owned bool) {
	rx := &e.rx
	var v orderVerdict
	rx.ready, v = rx.ord.receive(rx.ready[:0], f, payload, owned)
	switch v {
	case orderStale:
		e.stats.Drops.StaleSequenced++
	case orderDuplicate:
		e.stats.Drops.DuplicateMessage++
	case orderTooFarAhead, orderBadChannel:
		e.stats.Drops.OrderingOverflow++
	}
	for i := range rx.ready {
		m := &rx.ready[i]
		p := m.Payload
		if !m.Owned {
			p = e.pool.get(len(m.Payload))
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

// Receive-side state of the engine. Which datagram numbers arrived is kept
// by an ackQueue and which reliable message indexes were accepted by a
// reliableWindow, split reassembly by a splitAssembler, and per-channel
// ordering and sequencing by orderingChannels.

// rxState is the engine's receive side.
type rxState struct {
	track    ackQueue
	ackSince time.Time // when the oldest pending ACK range was queued
	dedup    reliableWindow
	asm      splitAssembler
	ord      orderingChannels
	ready    []recvMessage // scratch for orderingChannels.receive
	out      fifo[Message]
	queued   int    // bytes delivered but not yet read
	last     []byte // payload returned by the previous ReadMessage
}

// pendingBytes is what the receive side holds for the application:
// delivered but unread, and held for ordering.
func (r *rxState) pendingBytes() int {
	_, held := r.ord.held()
	return r.queued + held
}

func (r *rxState) reassemblyBytes() int { return r.asm.heldBytes() }

// ackFlushRanges: this many pending ACK ranges go out without waiting for
// the ACK delay (scattered arrivals, as under heavy loss).
const ackFlushRanges = 64

// ackDue returns when the pending ACKs must go out; zero if none.
func (r *rxState) ackDue(delay time.Duration) time.Time {
	switch n := r.track.pendingACK(); {
	case n == 0:
		return time.Time{}
	case n >= ackFlushRanges:
		return r.ackSince
	}
	return r.ackSince.Add(delay)
}
