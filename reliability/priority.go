package reliability

// Priority is the sending class of a message. It decides which queued
// message goes into the next datagram; it never changes delivery order on
// the receiving side beyond what the reliability allows.
//
// Scheduling: Immediate is strict, it always goes first. High, Medium and
// Low share the remaining capacity by weighted round robin with weights
// 4:2:1 counted in frames (a frame is at most one datagram), so a bulk
// transfer on Low gets a seventh of the link while High is busy and all of
// it when High and Medium are idle; High is never starved by bulk traffic
// and bulk traffic is never starved completely either.
//
// Ordered and sequenced messages on one channel are numbered when Send is
// called; giving them different priorities lets a later one overtake an
// earlier one on the wire, where the receiver holds it until the gap
// fills. Use one priority per ordered channel.
type Priority uint8

const (
	// Immediate messages go into the next datagram, before anything else.
	Immediate Priority = iota
	// High messages get four turns for every two of Medium and one of Low.
	High
	// Medium is the usual class.
	Medium
	// Low suits bulk transfers.
	Low
	numPriorities
)

// priorityWeights are the frames each class may send per round-robin round.
var priorityWeights = [numPriorities]int{Immediate: 0, High: 4, Medium: 2, Low: 1}

// Valid reports whether p is one of the four classes.
func (p Priority) Valid() bool { return p < numPriorities }

func (p Priority) String() string {
	switch p {
	case Immediate:
		return "immediate"
	case High:
		return "high"
	case Medium:
		return "medium"
	case Low:
		return "low"
	}
	return "Priority(invalid)"
}
