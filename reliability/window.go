package reliability

// reliableWindow deduplicates reliable frames by their reliable message
// index, so that a reliable message is delivered at most once however often
// the peer resends it. It remembers a sliding window of indexes: base is
// the lowest index not yet received, and a bitmap records which indexes in
// [base, base+size) have arrived. Everything before base has arrived, so is
// a duplicate; an index size or more past base is refused, because it
// cannot be remembered. An honest sender never gets that far ahead: it
// keeps its unacknowledged reliable indexes within the receiver's window
// (a Minecraft Bedrock client allows 32768).
//
// Memory is size/8 bytes, allocated on first use. Each index is cleared once
// as base slides over it, so the cost per frame is amortised O(1).
//
// Use check before committing to a frame, and mark once it was accepted
// downstream; a frame refused later (no room to hold it) is left unmarked
// so that its resend is accepted:
//
//	switch w.check(f.ReliableIndex) {
//	case windowNew:
//		if accepted(f) { w.mark(f.ReliableIndex) }
//	default: // drop, count the verdict
//	}
type reliableWindow struct {
	base uint32
	size uint32 // a power of two, at most windowMaxSize
	bits []uint64
}

const (
	// windowDefaultSize is the default span of reliable message indexes
	// accepted past the lowest missing one: the Minecraft Bedrock client's
	// tolerance, so an engine honouring it works with both.
	windowDefaultSize = 32768
	// windowMaxSize keeps the window far inside the 2^23 that serial
	// arithmetic can order.
	windowMaxSize = 1 << 20
)

// windowVerdict is reliableWindow.check's answer.
type windowVerdict uint8

const (
	// windowNew: an index not received before.
	windowNew windowVerdict = iota
	// windowDuplicate: received before; drop the frame (the datagram is
	// still acknowledged).
	windowDuplicate
	// windowTooFarAhead: size or more past the lowest missing index; drop
	// the frame without acknowledging its datagram.
	windowTooFarAhead
)

func (v windowVerdict) String() string {
	switch v {
	case windowNew:
		return "new"
	case windowDuplicate:
		return "duplicate"
	case windowTooFarAhead:
		return "too far ahead"
	}
	return "windowVerdict(invalid)"
}

// newReliableWindow returns a window spanning size indexes, rounded up to a
// power of two and clamped to 64..2^20; 0 means windowDefaultSize.
func newReliableWindow(size int) reliableWindow {
	if size <= 0 {
		size = windowDefaultSize
	}
	size = min(max(size, 64), windowMaxSize)
	s := uint32(64)
	for int(s) < size {
		s *= 2
	}
	return reliableWindow{size: s}
}

func (w *reliableWindow) init() {
	if w.size == 0 {
		*w = newReliableWindow(0)
	}
	if w.bits == nil {
		w.bits = make([]uint64, w.size/64)
	}
}

// The bitmap slot of index i is i mod size; 2^24 is a multiple of size, so
// the slots stay consistent across the 24-bit wrap.
func (w *reliableWindow) bit(i uint32) (*uint64, uint64) {
	s := i & (w.size - 1)
	return &w.bits[s/64], 1 << (s % 64)
}

// check classifies reliable index i without changing anything.
func (w *reliableWindow) check(i uint32) windowVerdict {
	w.init()
	i &= seqMask
	d := seqDiff(i, w.base)
	switch {
	case d < 0:
		return windowDuplicate
	case d >= int32(w.size):
		return windowTooFarAhead
	}
	if p, m := w.bit(i); *p&m != 0 {
		return windowDuplicate
	}
	return windowNew
}

// mark records i as received. The caller has had windowNew from check(i).
func (w *reliableWindow) mark(i uint32) {
	w.init()
	i &= seqMask
	if seqDiff(i, w.base) < 0 || seqDiff(i, w.base) >= int32(w.size) {
		return
	}
	p, m := w.bit(i)
	*p |= m
	// Slide base over the run of received indexes; their slots are
	// cleared for the indexes size further on.
	for {
		p, m := w.bit(w.base)
		if *p&m == 0 {
			return
		}
		*p &^= m
		w.base = seqAdd(w.base, 1)
	}
}

// lowestMissing returns the lowest reliable index not yet received.
func (w *reliableWindow) lowestMissing() uint32 { return w.base }
