package reliability

// Every RakNet counter on the wire (datagram numbers, reliable message
// indexes, ordering and sequencing indexes) is 24 bits wide and wraps. These
// helpers compare and advance such counters with serial-number arithmetic
// (RFC 1982): a is before b when b is less than half the number space ahead
// of a. Callers must keep the values they compare within 2^23 of each other,
// which every window in this package does by construction.

const (
	// seqSpace is the number of distinct 24-bit counter values.
	seqSpace = 1 << 24
	// seqMask reduces a value to 24 bits.
	seqMask = seqSpace - 1
	// seqHalf is half the counter space: the largest distance that serial
	// arithmetic can order unambiguously.
	seqHalf = seqSpace / 2
)

// seqAdd returns a+n modulo 2^24.
func seqAdd(a, n uint32) uint32 { return (a + n) & seqMask }

// seqDiff returns the signed distance from b to a (a-b) in the range
// [-2^23, 2^23). Positive means a is after b.
func seqDiff(a, b uint32) int32 {
	d := (a - b) & seqMask
	if d >= seqHalf {
		return int32(d) - seqSpace
	}
	return int32(d)
}

// seqLess reports whether a comes before b.
func seqLess(a, b uint32) bool { return seqDiff(a, b) < 0 }
