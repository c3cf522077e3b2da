package netcode

// ReplayProtection is the receive-side window that stops recorded packets
// from being accepted twice. It tracks the most recent sequence number and
// which of the ReplayWindowSize sequences before it have been received.
// The zero value is ready to use and has received nothing.
type ReplayProtection struct {
	mostRecent uint64
	// seen[i] holds the latest sequence received with seq%size == i, valid
	// only if the matching bit of used is set. A separate bit instead of a
	// marker value keeps sequence 2^64-1 usable.
	seen [ReplayWindowSize]uint64
	used [ReplayWindowSize / 64]uint64
}

// Reset forgets everything received.
func (r *ReplayProtection) Reset() { *r = ReplayProtection{} }

// AlreadyReceived reports whether seq must be dropped: it is older than the
// window, or it was received already. The comparison subtracts on the
// most-recent side so it cannot overflow near 2^64.
func (r *ReplayProtection) AlreadyReceived(seq uint64) bool {
	if r.mostRecent >= ReplayWindowSize && seq <= r.mostRecent-ReplayWindowSize {
		return true
	}
	i := seq % ReplayWindowSize
	if r.used[i/64]&(1<<(i%64)) == 0 {
		return false
	}
	return r.seen[i] >= seq
}

// Advance records seq as received. Call it only after the packet carrying
// seq has been authenticated, or forged sequence numbers could move the
// window.
func (r *ReplayProtection) Advance(seq uint64) {
	if seq > r.mostRecent {
		r.mostRecent = seq
	}
	i := seq % ReplayWindowSize
	r.seen[i] = seq
	r.used[i/64] |= 1 << (i % 64)
}

// MostRecent is the highest sequence number recorded so far (0 if none).
func (r *ReplayProtection) MostRecent() uint64 { return r.mostRecent }
