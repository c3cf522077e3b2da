package reliability

import (
	"io"

	"github.com/netrak/netrak/internal/rakwire"
)

// recvPipeline is the receive side of one connection, built from the four
// blocks in this package: ackQueue (which datagrams arrived, what to ACK and
// NAK), reliableWindow (dedup by reliable message index), splitAssembler
// (reassembly within limits) and orderingChannels (ordering and
// sequencing). It takes data datagrams and hands out the messages they make
// deliverable; it reads no clock and sends nothing itself: the engine
// decides when to take ACKs and NAKs from acks (takeACK, appendNAK).
//
// Frames go through, in this order: the reliable window (a duplicate is
// dropped), the ordering check (stale, duplicate, too far ahead, no room),
// the assembler for split parts, ordering, and only then is the reliable
// index marked as received. A reliable frame refused for lack of room
// (too far ahead of the reliable or ordering window, reassembly or hold
// limits) leaves no trace, and its datagram is not acknowledged, so the
// peer resends the frame after its retransmission timeout. Frames accepted
// before it from the same datagram stay accepted; their resends are
// deduplicated.
//
// The zero value is ready, with default limits.
type recvPipeline struct {
	acks  ackQueue
	rel   reliableWindow
	split splitAssembler
	order orderingChannels
	drops recvDrops
}

// recvConfig sets the receive side's limits; zero fields take defaults.
type recvConfig struct {
	reliableWindow int // span of reliable indexes accepted; default 32768
	split          splitLimits
	order          orderLimits
	// pool supplies the buffers of reassembled and held messages; owned
	// payloads the pipeline drops go back to it. Nil: allocate.
	pool *payloadPool
}

// recvDrops counts received input that was dropped or refused, by reason.
type recvDrops struct {
	// Datagrams.
	MalformedDatagram   uint64 // header unreadable, or a frame that ends the datagram early
	DuplicateDatagram   uint64 // datagram number seen before
	StaleDatagram       uint64 // datagram number too old to tell
	DatagramTooFarAhead uint64 // datagram number implausibly far ahead
	ACKListFull         uint64 // too many ACK ranges pending (the engine is not flushing)
	RefusedDatagram     uint64 // left unacknowledged: a reliable frame in it had no room
	NAKOverflow         uint64 // gaps not NAKed because the NAK list was full

	// Frames.
	InvalidFrame        uint64 // channel >= 32 or bad split fields; skipped
	DuplicateMessage    uint64 // reliable index received before
	ReliableTooFarAhead uint64 // reliable index past the window
	SplitDuplicate      uint64
	SplitInconsistent   uint64
	SplitTooManyParts   uint64
	SplitTooManyMsgs    uint64
	SplitOverBudget     uint64
	SplitEvicted        uint64 // incomplete unreliable split messages given up for room
	StaleSequenced      uint64 // sequenced message older than one delivered
	DuplicateOrdered    uint64 // ordered index delivered before
	OrderingTooFarAhead uint64
	OrderingHoldFull    uint64
}

func newRecvPipeline(cfg recvConfig) recvPipeline {
	p := recvPipeline{
		rel:   newReliableWindow(cfg.reliableWindow),
		split: newSplitAssembler(cfg.split),
		order: newOrderingChannels(cfg.order),
	}
	p.split.pool = cfg.pool
	p.order.pool = cfg.pool
	return p
}

// receiveDatagram processes one data datagram and appends the messages it
// makes deliverable to out, in delivery order. It reports whether the
// datagram was queued for an ACK. Delivered payloads with Owned false alias
// b; copy them before b is reused. Messages carry the wire kind (receipt
// kinds 5, 6, 7 arrive as 0, 2, 3, their plain counterparts).
func (p *recvPipeline) receiveDatagram(out []recvMessage, b []byte) ([]recvMessage, bool) {
	var h rakwire.DataHeader
	n, err := rakwire.ParseDataHeader(b, &h)
	if err != nil {
		p.drops.MalformedDatagram++
		return out, false
	}
	frames := rakwire.NewFrameReader(b[n:])
	switch p.acks.check(h.Number) {
	case ackNew:
	case ackDuplicate:
		p.drops.DuplicateDatagram++
		return out, false
	case ackTooOld:
		p.drops.StaleDatagram++
		return out, false
	case ackTooFarAhead:
		p.drops.DatagramTooFarAhead++
		return out, false
	default:
		p.drops.ACKListFull++
		return out, false
	}
	refused := false
	var f rakwire.Frame
	for {
		err := frames.Next(&f)
		if err == io.EOF {
			break
		}
		if frames.Skippable(err) {
			p.drops.InvalidFrame++
			continue
		}
		if err != nil {
			p.drops.MalformedDatagram++
			break
		}
		var ok bool
		out, ok = p.receiveFrame(out, &f)
		refused = refused || !ok
	}
	nakOverflow := p.acks.nakOverflow
	if refused {
		p.drops.RefusedDatagram++
		p.acks.refuse(h.Number)
	} else {
		p.acks.record(h.Number)
	}
	p.drops.NAKOverflow += p.acks.nakOverflow - nakOverflow
	return out, !refused
}

// receiveFrame runs one frame through dedup, reassembly and ordering. It
// returns false when a reliable frame was refused for lack of room.
func (p *recvPipeline) receiveFrame(out []recvMessage, f *rakwire.Frame) ([]recvMessage, bool) {
	f.Reliability = f.Reliability.WireKind()
	reliable := f.Reliability.IsReliable()
	if reliable {
		switch p.rel.check(f.ReliableIndex) {
		case windowDuplicate:
			p.drops.DuplicateMessage++
			return out, true
		case windowTooFarAhead:
			p.drops.ReliableTooFarAhead++
			return out, false
		}
	}
	// Accepted from here on: a reliable index is marked whatever becomes
	// of the message, since its datagram will be acknowledged.
	size := len(f.Payload)
	if f.Split {
		size = 0 // the whole message is charged when it completes
	}
	switch v := p.order.check(f, size); v {
	case orderStale, orderDuplicate:
		if f.Split {
			// Judged when complete: dropping parts of a sequenced message
			// that went stale while it was reassembling would leave it
			// in the assembler forever.
			break
		}
		if v == orderStale {
			p.drops.StaleSequenced++
		} else {
			p.drops.DuplicateOrdered++
		}
		p.markReliable(f)
		return out, true
	case orderTooFarAhead:
		p.drops.OrderingTooFarAhead++
		return out, !reliable
	case orderHoldFull:
		p.drops.OrderingHoldFull++
		return out, !reliable
	case orderBadChannel:
		p.drops.InvalidFrame++
		p.markReliable(f)
		return out, true
	}
	payload, owned := f.Payload, false
	if f.Split {
		evicted := p.split.evicted
		msg, v := p.split.add(f)
		p.drops.SplitEvicted += p.split.evicted - evicted
		switch v {
		case splitComplete:
			payload, owned = msg, true
		case splitPending:
			p.markReliable(f)
			return out, true
		case splitTooManyMessages:
			p.drops.SplitTooManyMsgs++
			return out, !reliable
		case splitOverBudget:
			p.drops.SplitOverBudget++
			return out, !reliable
		default:
			switch v {
			case splitDuplicate:
				p.drops.SplitDuplicate++
			case splitInconsistent:
				p.drops.SplitInconsistent++
			case splitTooManyParts:
				p.drops.SplitTooManyParts++
			}
			p.markReliable(f)
			return out, true
		}
	}
	out, v := p.order.receive(out, f, payload, owned)
	switch v {
	case orderDelivered, orderHeld:
	case orderStale:
		p.drops.StaleSequenced++
	case orderDuplicate:
		p.drops.DuplicateOrdered++
	case orderTooFarAhead:
		p.drops.OrderingTooFarAhead++
	}
	if owned && v != orderDelivered && v != orderHeld {
		p.split.pool.put(payload) // a reassembled message dropped
	}
	p.markReliable(f)
	return out, true
}

func (p *recvPipeline) markReliable(f *rakwire.Frame) {
	if f.Reliability.IsReliable() {
		p.rel.mark(f.ReliableIndex)
	}
}

// heldBytes returns the payload bytes the pipeline holds: parts being
// reassembled and messages waiting for their turn.
func (p *recvPipeline) heldBytes() int {
	_, ordered := p.order.held()
	return p.split.heldBytes() + ordered
}
