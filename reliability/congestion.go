package reliability

import "time"

// congestionController is a byte-counting window controller in the spirit
// of RakNet's sliding window (CCRakNetSlidingWindow): slow start, then
// additive increase, halving on loss. It improves on the reference in
// three ways: the window counts bytes rather than datagrams, a loss
// episode halves the window only once (losses of datagrams sent before
// the last decrease belong to the same episode, so the decrease happens
// at most once per round trip), and sending is paced by a token bucket so
// a full window never leaves as one burst.
type congestionController struct {
	mss      int // largest datagram
	cwnd     int // bytes allowed in flight
	ssthresh int

	recovering    bool
	recoveryStart time.Time // datagrams sent before it do not cut again
	caAcked       int       // bytes acked toward the next additive step

	// Pacing: tokens are bytes that may leave now; they refill at
	// gain·cwnd/SRTT up to burst bytes.
	tokens     float64
	lastRefill time.Time
}

const (
	initialWindowDatagrams = 10
	minWindowDatagrams     = 2
	maxWindowBytes         = 64 << 20
	pacingBurstDatagrams   = 16
)

func newCongestionController(mss int) congestionController {
	return congestionController{
		mss:      mss,
		cwnd:     initialWindowDatagrams * mss,
		ssthresh: maxWindowBytes,
		tokens:   float64(pacingBurstDatagrams * mss),
	}
}

// inSlowStart reports whether the window still grows by every
// acknowledged byte.
func (c *congestionController) inSlowStart() bool { return c.cwnd < c.ssthresh }

// canSend reports whether a datagram of size bytes fits the window. An
// empty pipe always admits one datagram, so progress never stops.
func (c *congestionController) canSend(inFlight, size int) bool {
	return inFlight == 0 || inFlight+size <= c.cwnd
}

func (c *congestionController) onAck(bytes int, sentAt time.Time) {
	if c.recovering && !sentAt.After(c.recoveryStart) {
		return // acknowledgements from before the cut do not grow it
	}
	c.recovering = false
	if c.cwnd < c.ssthresh {
		c.cwnd += bytes
	} else {
		c.caAcked += bytes
		if c.caAcked >= c.cwnd {
			c.caAcked -= c.cwnd
			c.cwnd += c.mss
		}
	}
	c.cwnd = min(c.cwnd, maxWindowBytes)
}

// onLoss handles a datagram declared lost (NAKed or timed out). It
// reports whether the window was cut. queueing says the path shows
// queueing delay (smoothed RTT well above the minimum): the loss is then
// taken as congestion and the window halves. Without queueing delay the
// loss is more likely random (radio, a lossy hop) and the window shrinks by
// only 15%, so a lossy but idle path is not starved down to the minimum
// window; tail drop at a full bottleneck queue always comes with a grown
// RTT, so congestion still halves the window.
func (c *congestionController) onLoss(sentAt, now time.Time, queueing bool) bool {
	if c.recovering && !sentAt.After(c.recoveryStart) {
		return false
	}
	c.recovering = true
	c.recoveryStart = now
	if queueing {
		c.ssthresh = max(c.cwnd/2, minWindowDatagrams*c.mss)
	} else {
		c.ssthresh = max(c.cwnd*85/100, minWindowDatagrams*c.mss)
	}
	c.cwnd = c.ssthresh
	c.caAcked = 0
	return true
}

// pacingRate is in bytes per nanosecond; 0 means unpaced.
func (c *congestionController) pacingRate(srtt time.Duration, haveRTT bool) float64 {
	if !haveRTT {
		return 0
	}
	srtt = max(srtt, time.Millisecond)
	gain := 1.25
	if c.cwnd < c.ssthresh {
		gain = 2
	}
	return gain * float64(c.cwnd) / float64(srtt)
}

func (c *congestionController) refill(now time.Time, rate float64) {
	burst := float64(pacingBurstDatagrams * c.mss)
	if rate == 0 {
		c.tokens = burst
		c.lastRefill = now
		return
	}
	if el := now.Sub(c.lastRefill); el > 0 {
		c.tokens = min(burst, c.tokens+float64(el)*rate)
	}
	c.lastRefill = now
}

// paced reports when a datagram of size bytes may leave; a zero time
// means now.
func (c *congestionController) paced(now time.Time, size int, rate float64) time.Time {
	if rate == 0 || c.tokens >= float64(size) {
		return time.Time{}
	}
	wait := time.Duration((float64(size)-c.tokens)/rate) + 1
	return now.Add(wait)
}

func (c *congestionController) spend(size int) { c.tokens -= float64(size) }
