package reliability

import "time"

// rttEstimator keeps RFC 6298 style smoothed RTT and variance, plus the
// minimum. Every datagram number is sent once (resent frames travel in new
// datagrams), so every ACK gives an unambiguous sample.
type rttEstimator struct {
	srtt, rttvar, minRTT, latest time.Duration
	hasSample                    bool
}

func (r *rttEstimator) update(sample time.Duration) {
	if sample < 0 {
		sample = 0
	}
	r.latest = sample
	if !r.hasSample {
		r.hasSample = true
		r.srtt = sample
		r.rttvar = sample / 2
		r.minRTT = sample
		return
	}
	r.minRTT = min(r.minRTT, sample)
	diff := r.srtt - sample
	if diff < 0 {
		diff = -diff
	}
	r.rttvar = (3*r.rttvar + diff) / 4
	r.srtt = (7*r.srtt + sample) / 8
}

// rto is RakNet's sliding-window timeout 2·SRTT + 4·RTTVAR + 30 ms,
// clamped, and doubled per consecutive expiry (backoff).
func (r *rttEstimator) rto(cfg *Config, backoff uint) time.Duration {
	d := cfg.InitialRTO
	if r.hasSample {
		d = 2*r.srtt + 4*r.rttvar + 30*time.Millisecond
	}
	// The ceiling also leaves at least eight attempts before the
	// connection is declared dead, so a run of losses on a lossy link
	// does not kill it after three or four tries.
	ceil := min(cfg.RTOMax, max(cfg.DeadTimeout/8, cfg.RTOMin))
	d = min(max(d, cfg.RTOMin), ceil)
	for i := uint(0); i < backoff && d < ceil; i++ {
		d *= 2
	}
	return min(d, ceil)
}
