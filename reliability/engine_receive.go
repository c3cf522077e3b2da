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
	if rx.queued >= e.cfg.MaxReceiveBytes {
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
	k := f.Reliability.WireKind()
	if k.HasOrderingChannel() && seqDiff(f.OrderingIndex, rx.ch[f.OrderingChannel].next) >= maxOrderAhead {
		e.stats.Drops.OrderingOverflow++
		return k.IsReliable()
	}
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
	var buf []byte
	if f.Split {
		msg, v := rx.asm.add(f)
		if v.transient() {
			e.stats.Drops.SplitRejected++
			return k.IsReliable()
		}
		if k.IsReliable() {
			rx.dedup.mark(f.ReliableIndex)
		}
		switch v {
		case splitPending:
			return false
		case splitDuplicate:
			e.stats.Drops.DuplicateMessage++
			return false
		case splitComplete:
			buf = msg
		default:
			e.stats.Drops.SplitRejected++
			return false
		}
	} else {
		if k.IsReliable() {
			rx.dedup.mark(f.ReliableIndex)
		}
		buf = e.pool.get(len(f.Payload))
		copy(buf, f.Payload)
	}
	e.deliver(k, f, buf)
	return false
}

// deliver hands a complete message to ordering and sequencing, which queue
// it for ReadMessage now, hold it, or drop it.
func (e *Engine) deliver(k Reliability, f *Frame, buf []byte) {
	rx := &e.rx
	rx.queued += len(buf)
	if !k.HasOrderingChannel() {
		rx.out.push(Message{Payload: buf, Reliability: k})
		return
	}
	ch := &rx.ch[f.OrderingChannel]
	d := seqDiff(f.OrderingIndex, ch.next)
	msg := heldMsg{buf: buf, kind: k, seq: f.SequencingIndex}
	if k.IsSequenced() {
		switch {
		case d < 0:
			e.dropHeld(buf, &e.stats.Drops.StaleSequenced)
		case d == 0:
			if seqDiff(f.SequencingIndex, ch.highestSeq) < 0 {
				e.dropHeld(buf, &e.stats.Drops.StaleSequenced)
				return
			}
			ch.highestSeq = seqAdd(f.SequencingIndex, 1)
			rx.out.push(Message{Payload: buf, Reliability: k, Channel: f.OrderingChannel})
		default:
			ch.ensure(int(d))
			s := ch.slot(f.OrderingIndex)
			if s.seq.buf != nil {
				if seqDiff(f.SequencingIndex, s.seq.seq) <= 0 {
					e.dropHeld(buf, &e.stats.Drops.StaleSequenced)
					return
				}
				e.dropHeld(s.seq.buf, &e.stats.Drops.StaleSequenced)
			}
			s.seq = msg
		}
		return
	}
	switch {
	case d < 0:
		e.dropHeld(buf, &e.stats.Drops.DuplicateMessage)
	case d == 0:
		rx.out.push(Message{Payload: buf, Reliability: k, Channel: f.OrderingChannel})
		ch.next = seqAdd(ch.next, 1)
		ch.highestSeq = 0
		e.drainChannel(f.OrderingChannel)
	default:
		ch.ensure(int(d))
		s := ch.slot(f.OrderingIndex)
		if s.ord.buf != nil {
			e.dropHeld(buf, &e.stats.Drops.DuplicateMessage)
			return
		}
		s.ord = msg
		ch.heldCount++
	}
}

// drainChannel delivers what was held for the channel's next indexes.
func (e *Engine) drainChannel(c uint8) {
	ch := &e.rx.ch[c]
	for len(ch.held) > 0 {
		s := ch.slot(ch.next)
		if s.seq.buf != nil {
			if seqDiff(s.seq.seq, ch.highestSeq) >= 0 {
				ch.highestSeq = seqAdd(s.seq.seq, 1)
				e.rx.out.push(Message{Payload: s.seq.buf, Reliability: s.seq.kind, Channel: c})
			} else {
				e.dropHeld(s.seq.buf, &e.stats.Drops.StaleSequenced)
			}
			s.seq = heldMsg{}
		}
		if s.ord.buf == nil {
			return
		}
		e.rx.out.push(Message{Payload: s.ord.buf, Reliability: s.ord.kind, Channel: c})
		s.ord = heldMsg{}
		ch.heldCount--
		ch.next = seqAdd(ch.next, 1)
		ch.highestSeq = 0
	}
}

func (e *Engine) dropHeld(buf []byte, counter *uint64) {
	*counter++
	e.rx.queued -= len(buf)
	e.pool.put(buf)
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
