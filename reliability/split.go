package reliability

import "github.com/netrak/netrak/internal/rakwire"

// splitAssembler reassembles split messages from their parts, within
// limits that hold against a hostile peer: parts per message, messages
// being reassembled at once, and bytes held per connection. The byte count
// is what is really allocated: every buffer's capacity plus the per-message
// part table (8 bytes a part) and a fixed overhead, so a flood of first
// parts announcing huge counts is bounded as well. Nothing is allocated for
// a message until its count has passed the limits.
//
// Parts are copied (the frames alias a datagram) into one buffer per
// message, in arrival order; when they arrive in index order, as they
// usually do, that buffer is the finished message and is handed over
// without a further copy. Buffers come from the engine's payload pool, so
// that reassembly in steady state does not allocate; a buffer the pool
// hands out larger than the budget allows is given back and one of the
// exact size allocated instead. Splits of the original library's shape (equal
// parts, the last one shorter) get the whole buffer on the first part.
//
// add never keeps a part it refuses, so a refused reliable part can be left
// unacknowledged and will be accepted when the peer resends it (see
// splitVerdict.transient).
//
// The zero value uses the engine's default limits (DefaultMaxSplitParts,
// DefaultMaxSplitMessages, DefaultMaxReassemblyBytes).
type splitAssembler struct {
	limits  splitLimits
	pool    *payloadPool // where buffers come from and go back to; nil: allocate
	msgs    map[uint16]*splitMessage
	free    []*splitMessage
	held    int    // bytes charged against limits.maxBytes
	started uint64 // messages started, to find the oldest
	evicted uint64 // unreliable messages given up to make room
}

// splitLimits bounds reassembly; a zero field takes the engine default.
type splitLimits struct {
	maxParts    int // parts in one message (the split count)
	maxMessages int // messages reassembling at once
	maxBytes    int // bytes held in reassembly
}

// splitMessage is a message being reassembled.
type splitMessage struct {
	hdr     rakwire.Frame // the first part's fields; Payload unused
	got     uint32
	size    int         // payload bytes received
	parts   []splitPart // one per index
	buf     []byte      // parts in arrival order
	inOrder bool        // parts so far arrived in index order
	charged int         // bytes charged to the assembler for this message
	serial  uint64      // order of starting
}

// splitPart locates a received part in splitMessage.buf; n == 0 means not
// received (parts are never empty).
type splitPart struct{ off, n uint32 }

const (
	// splitPartCost is what a part table entry costs.
	splitPartCost = 8
	// splitMessageCost is the fixed bookkeeping charged per message.
	splitMessageCost = 128
	// splitRecycleParts and splitRecycleMessages bound what is kept for
	// reuse after a message completes: up to 8 part tables of up to 4096
	// entries (256 KiB in all).
	splitRecycleParts    = 4096
	splitRecycleMessages = 8
)

// splitVerdict is splitAssembler.add's answer.
type splitVerdict uint8

const (
	// splitPending: the part was kept; the message is not complete.
	splitPending splitVerdict = iota
	// splitComplete: the part completed the message, which add returned.
	splitComplete
	// splitDuplicate: that part was already held, with the same length.
	splitDuplicate
	// splitInconsistent: the part contradicts the message's earlier parts
	// (a different count, kind, channel, ordering or sequencing index, or a
	// different length for an index already held). Dropped.
	splitInconsistent
	// splitTooManyParts: the split count exceeds the parts limit. Dropped;
	// such a message can never be reassembled here.
	splitTooManyParts
	// splitTooManyMessages: a new message, but the limit of messages
	// reassembling at once is reached by reliable messages (an incomplete
	// unreliable one is evicted to make room instead). Transient.
	splitTooManyMessages
	// splitOverBudget: keeping the part would exceed the byte limit.
	// Transient.
	splitOverBudget
)

// transient reports whether the part was refused only for lack of room:
// the same part may be accepted later, once other messages complete, so a
// reliable part refused this way should be left unacknowledged.
func (v splitVerdict) transient() bool {
	return v == splitTooManyMessages || v == splitOverBudget
}

func (v splitVerdict) String() string {
	switch v {
	case splitPending:
		return "pending"
	case splitComplete:
		return "complete"
	case splitDuplicate:
		return "duplicate part"
	case splitInconsistent:
		return "inconsistent part"
	case splitTooManyParts:
		return "too many parts"
	case splitTooManyMessages:
		return "too many split messages"
	case splitOverBudget:
		return "reassembly bytes exhausted"
	}
	return "splitVerdict(invalid)"
}

// newSplitAssembler returns an assembler with the given limits.
func newSplitAssembler(l splitLimits) splitAssembler {
	return splitAssembler{limits: l}
}

func (a *splitAssembler) init() {
	if a.limits.maxParts <= 0 {
		a.limits.maxParts = DefaultMaxSplitParts
	}
	if a.limits.maxMessages <= 0 {
		a.limits.maxMessages = DefaultMaxSplitMessages
	}
	if a.limits.maxBytes <= 0 {
		a.limits.maxBytes = DefaultMaxReassemblyBytes
	}
	if a.msgs == nil {
		a.msgs = make(map[uint16]*splitMessage)
	}
}

// heldBytes returns the bytes currently charged to reassembly; it never
// exceeds the byte limit.
func (a *splitAssembler) heldBytes() int { return a.held }

// pending returns the number of messages being reassembled.
func (a *splitAssembler) pending() int { return len(a.msgs) }

// add offers one part, a frame with Split set whose fields the wire parser
// has checked (count > 0, index < count). When the part completes its
// message, add returns the whole message in a buffer the caller now owns,
// with splitComplete; the message's kind and ordering fields are f's.
// Otherwise msg is nil. f.Payload is copied, never retained.
func (a *splitAssembler) add(f *rakwire.Frame) (msg []byte, v splitVerdict) {
	a.init()
	if f.SplitCount == 0 || f.SplitIndex >= f.SplitCount || len(f.Payload) == 0 {
		return nil, splitInconsistent
	}
	m := a.msgs[f.SplitID]
	if m == nil {
		return a.start(f)
	}
	if uint32(len(m.parts)) != f.SplitCount || m.hdr.Reliability != f.Reliability ||
		m.hdr.OrderingChannel != f.OrderingChannel || m.hdr.OrderingIndex != f.OrderingIndex ||
		m.hdr.SequencingIndex != f.SequencingIndex {
		return nil, splitInconsistent
	}
	if p := m.parts[f.SplitIndex]; p.n != 0 {
		if int(p.n) != len(f.Payload) {
			return nil, splitInconsistent
		}
		return nil, splitDuplicate
	}
	need := len(m.buf) + len(f.Payload)
	if need > cap(m.buf) {
		// Grow, doubling when the budget allows and to the exact need
		// otherwise.
		newCap := max(need, 2*cap(m.buf))
		if a.held-cap(m.buf)+newCap > a.limits.maxBytes {
			newCap = need
		}
		if a.held-cap(m.buf)+newCap > a.limits.maxBytes {
			return nil, splitOverBudget
		}
		nb := a.alloc(newCap, a.limits.maxBytes-a.held+cap(m.buf))[:len(m.buf)]
		copy(nb, m.buf)
		a.held += cap(nb) - cap(m.buf)
		m.charged += cap(nb) - cap(m.buf)
		a.pool.put(m.buf)
		m.buf = nb
	}
	m.keep(f)
	if m.got < uint32(len(m.parts)) {
		return nil, splitPending
	}
	return a.finish(f.SplitID, m), splitComplete
}

// start begins a message with its first-arriving part.
func (a *splitAssembler) start(f *rakwire.Frame) ([]byte, splitVerdict) {
	if f.SplitCount > uint32(a.limits.maxParts) {
		return nil, splitTooManyParts
	}
	count := int(f.SplitCount)
	if f.SplitCount == 1 {
		// A one-part split is a whole message already.
		return a.pool.clone(f.Payload), splitComplete
	}
	if len(a.msgs) >= a.limits.maxMessages && !a.evictUnreliable() {
		return nil, splitTooManyMessages
	}
	table := splitMessageCost + count*splitPartCost
	room := a.limits.maxBytes - a.held - table
	if room < len(f.Payload) {
		return nil, splitOverBudget
	}
	// Reserve count equal parts when that fits: exact for the original
	// library, whose parts are equal but the last.
	bufCap := len(f.Payload)
	if est := count * len(f.Payload); est <= room {
		bufCap = est
	}
	var m *splitMessage
	if n := len(a.free); n > 0 {
		m = a.free[n-1]
		a.free = a.free[:n-1]
	} else {
		m = new(splitMessage)
	}
	if cap(m.parts) >= count {
		m.parts = m.parts[:count]
	} else {
		m.parts = make([]splitPart, count)
	}
	m.hdr = *f
	m.hdr.Payload = nil
	m.got, m.size, m.inOrder = 0, 0, true
	a.started++
	m.serial = a.started
	m.buf = a.alloc(bufCap, room)[:0]
	m.charged = table + cap(m.buf)
	a.held += m.charged
	a.msgs[f.SplitID] = m
	m.keep(f)
	return nil, splitPending
}

// alloc returns a buffer of length n from the pool, with a capacity of at
// most limit (n <= limit): the capacity is what the byte limit is charged.
func (a *splitAssembler) alloc(n, limit int) []byte {
	b := a.pool.get(n)
	if cap(b) > limit {
		a.pool.put(b)
		b = make([]byte, n)
	}
	return b
}

// evictUnreliable gives up the oldest incomplete unreliable message, whose
// missing parts may never come (senders should make split messages
// reliable, but a lost part of an unreliable one would otherwise hold its
// slot for good). It reports whether it freed a slot.
func (a *splitAssembler) evictUnreliable() bool {
	var oldID uint16
	var old *splitMessage
	for id, m := range a.msgs {
		if !m.hdr.Reliability.IsReliable() && (old == nil || m.serial < old.serial) {
			oldID, old = id, m
		}
	}
	if old == nil {
		return false
	}
	a.release(oldID, old)
	a.evicted++
	return true
}

// keep copies f's payload into the message; the buffer has room.
func (m *splitMessage) keep(f *rakwire.Frame) {
	m.inOrder = m.inOrder && f.SplitIndex == m.got
	m.parts[f.SplitIndex] = splitPart{off: uint32(len(m.buf)), n: uint32(len(f.Payload))}
	m.buf = append(m.buf, f.Payload...)
	m.got++
	m.size += len(f.Payload)
}

// finish hands out the completed message and recycles its bookkeeping.
func (a *splitAssembler) finish(id uint16, m *splitMessage) []byte {
	msg := m.buf
	if m.inOrder {
		m.buf = nil // handed over: release must not recycle it
	} else {
		msg = a.pool.get(m.size)[:0]
		for _, p := range m.parts {
			msg = append(msg, m.buf[p.off:p.off+p.n]...)
		}
	}
	a.release(id, m)
	return msg
}

// release forgets message id and recycles its bookkeeping and buffer.
func (a *splitAssembler) release(id uint16, m *splitMessage) {
	a.held -= m.charged
	delete(a.msgs, id)
	a.pool.put(m.buf)
	m.buf = nil
	if cap(m.parts) <= splitRecycleParts && len(a.free) < splitRecycleMessages {
		clear(m.parts)
		a.free = append(a.free, m)
	}
}
