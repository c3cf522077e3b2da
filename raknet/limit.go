package raknet

import (
	"net/netip"
	"time"
)

// Defaults for the listener's per-source offline limits.
const (
	// DefaultOfflineRate is how many offline messages per second a source
	// may send on average: enough for a server list pinging every second
	// and for MTU discovery, far too little to use the server as an
	// amplifier.
	DefaultOfflineRate = 10
	// DefaultOfflineBurst is how many a source may send at once.
	DefaultOfflineBurst = 20
	// DefaultMaxSources bounds the sources tracked by the rate limiter
	// and the block list together.
	DefaultMaxSources = 8192
)

// rateLimiter is a token bucket per source address in a bounded table. It
// is sans-I/O: every call takes the time.
type rateLimiter struct {
	rate    float64 // tokens per second
	burst   float64
	max     int
	buckets map[netip.AddrPort]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

func newRateLimiter(rate float64, burst, maxSources int) *rateLimiter {
	return &rateLimiter{rate: rate, burst: float64(burst), max: maxSources, buckets: make(map[netip.AddrPort]*bucket)}
}

// allow takes a token for src if it has one. A new source takes a slot in
// the table; when the table is full, idle sources (full buckets) are
// evicted first, and if none is idle the new source is refused: under a
// flood of distinct sources, answering is what must stop.
func (r *rateLimiter) allow(src netip.AddrPort, now time.Time) bool {
	b := r.buckets[src]
	if b == nil {
		if len(r.buckets) >= r.max && !r.evictIdle(now) {
			return false
		}
		b = &bucket{tokens: r.burst, at: now}
		r.buckets[src] = b
	}
	if dt := now.Sub(b.at); dt > 0 {
		b.tokens = min(r.burst, b.tokens+dt.Seconds()*r.rate)
		b.at = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// evictIdle removes every source whose bucket has refilled, and reports
// whether any room was made.
func (r *rateLimiter) evictIdle(now time.Time) bool {
	full := time.Duration(r.burst / r.rate * float64(time.Second))
	n := len(r.buckets)
	for src, b := range r.buckets {
		if now.Sub(b.at) >= full {
			delete(r.buckets, src)
		}
	}
	return len(r.buckets) < n
}
