package reliability

import "time"

// rttEstimator keeps RFC 6298 style smoothed RTT and variance, plus the
// minimum. Every datagram number is sent once (resent frames travel in new
// datagrams), so every ACK gives an unambiguous sample.
//
// For the congestion controller's queueing signal it also keeps a recent
// minimum (the smallest sample of the current and the previous window of
// at least one smoothed RTT and minWindowSamples samples) and a base RTT (the smallest sample of the
// last baseRTTWindow, so a route change to a longer path is eventually
// accepted rather than read as a standing queue forever).
type rttEstimator struct {
	srtt, rttvar, minRTT, latest time.Duration
	hasSample                    bool

	curMin, prevMin time.Duration
	curStart        time.Time
	curN            int // samples in the current window
	base            time.Duration
	baseAt          time.Time
}

const (
	// baseRTTWindow is how long the base RTT holds without a sample as low.
	baseRTTWindow = 10 * time.Second
	// minWindowSamples is the fewest samples a recent-minimum window
	// holds: the minimum of fewer jittery samples still stands well above
	// the path's floor.
	minWindowSamples = 8
)

func (r *rttEstimator) update(sample time.Duration, now time.Time) {
	if sample < 0 {
		sample = 0
	}
	r.latest = sample
	if !r.hasSample {
		r.hasSample = true
		r.srtt = sample
		r.rttvar = sample / 2
		r.minRTT = sample
		r.curMin, r.prevMin, r.curStart, r.curN = sample, sample, now, 1
		r.base, r.baseAt = sample, now
		return
	}
	r.minRTT = min(r.minRTT, sample)
	diff := r.srtt - sample
	if diff < 0 {
		diff = -diff
	}
	r.rttvar = (3*r.rttvar + diff) / 4
	r.srtt = (7*r.srtt + sample) / 8

	if r.curN >= minWindowSamples && now.Sub(r.curStart) >= max(r.srtt, time.Millisecond) {
		r.prevMin, r.curMin, r.curStart, r.curN = r.curMin, sample, now, 1
	} else {
		r.curMin = min(r.curMin, sample)
		r.curN++
	}
	switch {
	case sample <= r.base:
		r.base, r.baseAt = sample, now
	case now.Sub(r.baseAt) >= baseRTTWindow:
		r.base, r.baseAt = r.recentMin(), now
	}
}

// recentMin is the smallest sample of the last one to two windows.
func (r *rttEstimator) recentMin() time.Duration { return min(r.curMin, r.prevMin) }

// queueing reports whether the recent minimum RTT stands above the base
// RTT by more than allowance plus an eighth of the base: the path's
// bottleneck holds a queue. Jitter alone does not raise the minimum of
// a round's samples, so it does not count. Without a sample it reports
// false.
func (r *rttEstimator) queueing(allowance time.Duration) bool {
	return r.hasSample && r.recentMin() > r.base+r.base/8+allowance
}

// baseShare is base RTT / smoothed RTT, in (0, 1]: the part of the RTT
// that is the path's own rather than queueing. 1 without a sample.
func (r *rttEstimator) baseShare() float64 {
	if !r.hasSample || r.srtt <= r.base {
		return 1
	}
	return float64(r.base) / float64(r.srtt)
}

// rto is RakNet's sliding-window timeout 2·SRTT + 4·RTTVAR + 30 ms,
// clamped, and doubled per consecutive expiry (backoff).
func (r *rttEstimator) rto(cfg *Config, backoff uint) time.Duration {
	d := cfg.InitialRTO
	if r.hasSample {
		d = 2*r.srtt + 4*r.rttvar + 30*time.Millisecond
	}
	ceil := cfg.rtoCeiling()
	d = min(max(d, cfg.RTOMin), ceil)
	for i := uint(0); i < backoff && d < ceil; i++ {
		d *= 2
	}
	return min(d, ceil)
}
