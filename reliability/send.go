package reliability

import "time"

// outMsg is a message accepted by Send, from queueing until it is fully
// on the wire (unreliable) or fully acknowledged (reliable).
type outMsg struct {
	gen uint32 // bumped on release; frameRefs holding an old gen are stale

	buf     []byte // owned copy of the payload, from the buffer pool
	kind    Reliability
	wire    Reliability // on-the-wire kind: upgraded when split, receipts stripped
	channel uint8
	prio    Priority

	orderingIndex   uint32
	sequencingIndex uint32

	split    bool
	splitID  uint16
	partSize int
	parts    uint32
	nextPart uint32 // next part to put on the wire for the first time
	unacked  uint32 // reliable parts not yet acknowledged
	acked    []uint64

	receipt uint32
	cost    int // bytes charged against MaxQueueBytes
}

func (m *outMsg) part(i uint32) []byte {
	if !m.split {
		return m.buf
	}
	start := int(i) * m.partSize
	return m.buf[start:min(start+m.partSize, len(m.buf))]
}

func (m *outMsg) isAcked(i uint32) bool { return m.acked[i>>6]&(1<<(i&63)) != 0 }
func (m *outMsg) setAcked(i uint32)     { m.acked[i>>6] |= 1 << (i & 63) }

// frameRef names one frame inside a sent datagram: which message, which
// part, and the reliable index it was given. A resent frame keeps its
// reliable index so the receiver can recognise a duplicate.
type frameRef struct {
	msg      *outMsg
	gen      uint32
	part     uint32
	relIndex uint32
}

func (f *frameRef) live() bool { return f.msg != nil && f.msg.gen == f.gen }

// sentDatagram is a data datagram in flight.
type sentDatagram struct {
	num      uint32
	sentAt   time.Time
	size     int
	inFlight bool
	nakedAt  time.Time  // when the peer reported it missing; zero: not yet
	refs     []frameRef // frames that need an outcome: reliable or receipt
}

// sentWindow holds the data datagrams sent and not yet acknowledged or
// lost, indexed by datagram number. Numbers are consecutive, so a slot is
// number-base positions from the oldest; the window only covers numbers
// from base to next.
type sentWindow struct {
	slots []sentDatagram // power-of-two length
	base  uint32         // oldest number still covered
	next  uint32         // number of the next datagram
	count int            // datagrams still in flight
}

func (w *sentWindow) span() int { return int((w.next - w.base) & seqMask) }

func (w *sentWindow) slot(num uint32) *sentDatagram {
	return &w.slots[int(num)&(len(w.slots)-1)]
}

// add opens the slot for the next datagram number.
func (w *sentWindow) add(now time.Time) *sentDatagram {
	if w.span() == len(w.slots) {
		w.grow()
	}
	d := w.slot(w.next)
	d.num = w.next
	d.sentAt = now
	d.size = 0
	d.inFlight = true
	d.nakedAt = time.Time{}
	d.refs = d.refs[:0]
	w.next = seqAdd(w.next, 1)
	w.count++
	return d
}

func (w *sentWindow) grow() {
	n := max(2*len(w.slots), 64)
	ns := make([]sentDatagram, n)
	for num, i := w.base, 0; i < w.span(); num, i = seqAdd(num, 1), i+1 {
		ns[int(num)&(n-1)] = *w.slot(num)
	}
	w.slots = ns
}

// lookup returns the in-flight datagram with this number, or nil.
func (w *sentWindow) lookup(num uint32) *sentDatagram {
	if uint32(w.span()) <= (num-w.base)&seqMask {
		return nil
	}
	d := w.slot(num)
	if !d.inFlight || d.num != num {
		return nil
	}
	return d
}

// retire marks d done and advances base over finished slots.
func (w *sentWindow) retire(d *sentDatagram) {
	d.inFlight = false
	w.count--
	for w.base != w.next && !w.slot(w.base).inFlight {
		s := w.slot(w.base)
		clear(s.refs)
		w.base = seqAdd(w.base, 1)
	}
}

// oldest returns the oldest in-flight datagram, or nil.
func (w *sentWindow) oldest() *sentDatagram {
	if w.base == w.next {
		return nil
	}
	return w.slot(w.base)
}

// sendRelWindow tracks which reliable message indexes are acknowledged
// between the lowest unacknowledged one and the next to assign. The
// engine never lets that span reach maxReliableSpan, which keeps it well
// inside a Minecraft Bedrock client's limits (it drops messages more than
// 32768 past the lowest missing one, and more than 4097 waiting on one
// channel; a channel can never have more messages waiting than there are
// reliable indexes in flight).
type sendRelWindow struct {
	bits [maxReliableSpan / 64]uint64
	low  uint32 // lowest unacknowledged reliable index
	next uint32 // next reliable index to assign
}

const maxReliableSpan = 4096

func (r *sendRelWindow) span() int  { return int((r.next - r.low) & seqMask) }
func (r *sendRelWindow) full() bool { return r.span() >= maxReliableSpan }

func (r *sendRelWindow) assign() uint32 {
	i := r.next
	r.next = seqAdd(r.next, 1)
	return i
}

func (r *sendRelWindow) ack(i uint32) {
	off := (i - r.low) & seqMask
	if off >= uint32(r.span()) {
		return
	}
	b := i & (maxReliableSpan - 1)
	r.bits[b>>6] |= 1 << (b & 63)
	for r.low != r.next {
		b := r.low & (maxReliableSpan - 1)
		if r.bits[b>>6]&(1<<(b&63)) == 0 {
			break
		}
		r.bits[b>>6] &^= 1 << (b & 63)
		r.low = seqAdd(r.low, 1)
	}
}
