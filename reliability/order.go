package reliability

import "github.com/netrak/netrak/internal/rakwire"

// orderingChannels applies ordering and sequencing to complete messages
// (after deduplication and reassembly), for the 32 ordering channels of
// one direction, with RakNet's semantics:
//
//   - An ordered message (kinds 3 and 7) carries its channel's ordering
//     index. It is delivered when every ordered message before it on the
//     channel has been, and held until then.
//   - A sequenced message (kinds 1 and 4) carries the ordering index the
//     next ordered message will get (the sender does not increment it) and
//     its own sequencing index, which restarts at 0 after each ordered
//     message. It belongs between the ordered messages around it: with the
//     current ordering index it is delivered at once unless an equal or
//     newer sequencing index was delivered already (then it is dropped as
//     stale); with an older ordering index it is stale; with a newer one it
//     is held and delivered, in sequencing order, right before the ordered
//     message with that index.
//   - Other kinds have no channel and pass straight through.
//
// All indexes are 24-bit serial numbers. Memory is bounded: a message is
// held only if its ordering index is less than maxAhead past the channel's
// next one, at most maxHeld messages wait per channel, and at most
// maxHeldBytes bytes wait over all channels; check reports when a message
// would not fit so that the caller can refuse it before accepting it.
//
// Payloads: receive copies a payload it must hold, into a buffer from the
// pool, unless the caller says it owns it (a reassembled message), so
// frames read straight from a datagram can be passed in. Delivered
// messages say whether their payload is such an owned buffer or the
// caller's own slice. An owned payload dropped from the hold goes back to
// the pool.
//
// The zero value is ready, with default limits.
type orderingChannels struct {
	limits    orderLimits
	pool      *payloadPool // copies of held payloads come from it; nil: allocate
	ch        [NumOrderingChannels]orderingState
	heldMsgs  int
	heldBytes int
}

// orderLimits bounds what is held; a zero field takes its default.
type orderLimits struct {
	maxAhead     int // ordering indexes past the next expected; default orderDefaultMaxAhead
	maxHeld      int // messages held per channel; default orderDefaultMaxHeld
	maxHeldBytes int // payload bytes held over all channels; default DefaultMaxReceiveBytes
}

const (
	// orderDefaultMaxAhead matches the reliable window: an honest sender
	// that stays inside it stays inside this too.
	orderDefaultMaxAhead = windowDefaultSize
	// orderDefaultMaxHeld mirrors the Minecraft Bedrock client, which
	// holds about 4096 messages per channel.
	orderDefaultMaxHeld = 4096
	// orderMaxAhead keeps held indexes far inside serial arithmetic's 2^23.
	orderMaxAhead = 1 << 20
)

// orderingState is one channel's receive state.
type orderingState struct {
	next    uint32         // ordering index of the next ordered message to deliver
	seqNext uint32         // lowest sequencing index still deliverable for next
	held    []orderWaiting // a min-heap in delivery order
}

// orderWaiting is a message waiting for its turn.
type orderWaiting struct {
	ordering, sequencing uint32
	ordered              bool
	reliability          Reliability
	payload              []byte
}

// recvMessage is a message ready for the application.
type recvMessage struct {
	Reliability Reliability // as carried on the wire
	Channel     uint8       // 0 for kinds without a channel
	Payload     []byte
	// Owned is true when Payload is a buffer no one else refers to (a
	// reassembled message, or a copy made to hold it); false when it is
	// the slice the caller passed in, which may alias a datagram.
	Owned bool
}

// orderVerdict is the answer of check and receive.
type orderVerdict uint8

const (
	// orderDelivered: delivered now (for check: would be).
	orderDelivered orderVerdict = iota
	// orderHeld: held until its turn (for check: would be).
	orderHeld
	// orderStale: a sequenced message older than one delivered. Dropped.
	orderStale
	// orderDuplicate: an ordered message whose index was delivered.
	// Dropped.
	orderDuplicate
	// orderTooFarAhead: maxAhead or more past the channel's next index.
	// Dropped; a reliable one should be left unacknowledged.
	orderTooFarAhead
	// orderHoldFull (check only): holding it would exceed maxHeld or
	// maxHeldBytes. A reliable one should be left unacknowledged.
	orderHoldFull
	// orderBadChannel: channel 32 or more. Dropped.
	orderBadChannel
)

func (v orderVerdict) String() string {
	switch v {
	case orderDelivered:
		return "delivered"
	case orderHeld:
		return "held"
	case orderStale:
		return "stale sequenced"
	case orderDuplicate:
		return "duplicate ordered"
	case orderTooFarAhead:
		return "too far ahead"
	case orderHoldFull:
		return "hold full"
	case orderBadChannel:
		return "bad channel"
	}
	return "orderVerdict(invalid)"
}

func newOrderingChannels(l orderLimits) orderingChannels {
	return orderingChannels{limits: l}
}

func (o *orderingChannels) init() {
	if o.limits.maxAhead <= 0 {
		o.limits.maxAhead = orderDefaultMaxAhead
	}
	o.limits.maxAhead = min(o.limits.maxAhead, orderMaxAhead)
	if o.limits.maxHeld <= 0 {
		o.limits.maxHeld = orderDefaultMaxHeld
	}
	if o.limits.maxHeldBytes <= 0 {
		o.limits.maxHeldBytes = DefaultMaxReceiveBytes
	}
}

// held returns the number of messages and payload bytes held over all
// channels.
func (o *orderingChannels) held() (msgs, bytes int) { return o.heldMsgs, o.heldBytes }

// check says what receive would do with a message of size bytes carrying
// f's kind and ordering fields, without changing anything. For a split
// message, check each part (size 0 for the parts, the total at the end);
// receive itself never refuses for lack of room.
func (o *orderingChannels) check(f *rakwire.Frame, size int) orderVerdict {
	o.init()
	r := Reliability(f.Reliability)
	if !r.HasOrderingChannel() {
		return orderDelivered
	}
	if f.OrderingChannel >= NumOrderingChannels {
		return orderBadChannel
	}
	c := &o.ch[f.OrderingChannel]
	d := seqDiff(f.OrderingIndex&seqMask, c.next)
	switch {
	case d < 0 && r.IsSequenced():
		return orderStale
	case d < 0:
		return orderDuplicate
	case d == 0 && r.IsSequenced() && seqLess(f.SequencingIndex&seqMask, c.seqNext):
		return orderStale
	case d == 0:
		return orderDelivered
	case int(d) >= o.limits.maxAhead:
		return orderTooFarAhead
	case len(c.held) >= o.limits.maxHeld || o.heldBytes+size > o.limits.maxHeldBytes:
		return orderHoldFull
	}
	return orderHeld
}

// receive takes one complete message with f's kind and ordering fields
// (f.Payload is ignored; payload is the message) and appends to out what
// can be delivered now: the message itself, and any held messages it
// unblocks, in order. owned says the caller hands payload over; otherwise
// a held payload is copied. It returns the updated out and what happened
// to this message.
func (o *orderingChannels) receive(out []recvMessage, f *rakwire.Frame, payload []byte, owned bool) ([]recvMessage, orderVerdict) {
	v := o.check(f, 0)
	switch v {
	case orderHoldFull:
		v = orderHeld // the caller checked room before accepting the message
	case orderDelivered:
	case orderHeld:
	default:
		return out, v
	}
	r := Reliability(f.Reliability)
	if !r.HasOrderingChannel() {
		return append(out, recvMessage{Reliability: r, Payload: payload, Owned: owned}), orderDelivered
	}
	ch := f.OrderingChannel
	c := &o.ch[ch]
	if v == orderHeld {
		if !owned {
			payload = o.pool.clone(payload)
		}
		o.heldBytes += len(payload)
		o.heldMsgs++
		c.push(orderWaiting{
			ordering:    f.OrderingIndex & seqMask,
			sequencing:  f.SequencingIndex & seqMask,
			ordered:     r.IsOrdered(),
			reliability: r,
			payload:     payload,
		})
		return out, orderHeld
	}
	out = append(out, recvMessage{Reliability: r, Channel: ch, Payload: payload, Owned: owned})
	if r.IsSequenced() {
		c.seqNext = seqAdd(f.SequencingIndex&seqMask, 1)
		return out, orderDelivered
	}
	c.advance()
	// Release what waited for this message.
	for len(c.held) > 0 {
		h := &c.held[0]
		d := seqDiff(h.ordering, c.next)
		if d > 0 {
			break
		}
		m := c.pop()
		o.heldBytes -= len(m.payload)
		o.heldMsgs--
		switch {
		case d < 0:
			// A second ordered message with an index already delivered:
			// a hostile duplicate that reached the hold. Dropped.
			o.pool.put(m.payload)
		case m.ordered:
			out = append(out, recvMessage{Reliability: m.reliability, Channel: ch, Payload: m.payload, Owned: true})
			c.advance()
		case !seqLess(m.sequencing, c.seqNext):
			out = append(out, recvMessage{Reliability: m.reliability, Channel: ch, Payload: m.payload, Owned: true})
			c.seqNext = seqAdd(m.sequencing, 1)
		default:
			o.pool.put(m.payload) // a sequenced message overtaken while held
		}
	}
	return out, orderDelivered
}

// advance moves past a delivered ordered message: the next sequencing
// epoch starts at 0.
func (c *orderingState) advance() {
	c.next = seqAdd(c.next, 1)
	c.seqNext = 0
}

// before is the hold's delivery order: by ordering index, then sequenced
// messages (sent before the ordered message with their index) in
// sequencing order, then the ordered message.
func (a *orderWaiting) before(b *orderWaiting) bool {
	if d := seqDiff(a.ordering, b.ordering); d != 0 {
		return d < 0
	}
	if a.ordered != b.ordered {
		return !a.ordered
	}
	return !a.ordered && seqLess(a.sequencing, b.sequencing)
}

func (c *orderingState) push(m orderWaiting) {
	h := append(c.held, m)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h[i].before(&h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	c.held = h
}

func (c *orderingState) pop() orderWaiting {
	h := c.held
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h[last] = orderWaiting{} // drop the payload reference
	h = h[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h) && h[l].before(&h[m]) {
			m = l
		}
		if r < len(h) && h[r].before(&h[m]) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	c.held = h
	return top
}
