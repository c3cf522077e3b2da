package reliability

import (
	"testing"
	"time"
)

func TestRTTEstimatorAndRTO(t *testing.T) {
	cfg, err := Config{}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	var r rttEstimator
	if got := r.rto(&cfg, 0); got != DefaultInitialRTO {
		t.Errorf("RTO before a sample = %v, want %v", got, DefaultInitialRTO)
	}
	r.update(100*time.Millisecond, epoch)
	if r.srtt != 100*time.Millisecond || r.rttvar != 50*time.Millisecond || r.minRTT != 100*time.Millisecond {
		t.Errorf("after one sample: %+v", r)
	}
	// 2·100 + 4·50 + 30 ms.
	if got := r.rto(&cfg, 0); got != 430*time.Millisecond {
		t.Errorf("RTO = %v, want 430ms", got)
	}
	if got := r.rto(&cfg, 1); got != 860*time.Millisecond {
		t.Errorf("RTO with one backoff = %v, want 860ms", got)
	}
	if got := r.rto(&cfg, 10); got != cfg.DeadTimeout/8 {
		t.Errorf("RTO with long backoff = %v, want the ceiling %v", got, cfg.DeadTimeout/8)
	}
	r.update(20*time.Millisecond, epoch)
	if r.minRTT != 20*time.Millisecond || r.srtt != 90*time.Millisecond || r.latest != 20*time.Millisecond {
		t.Errorf("after a lower sample: %+v", r)
	}
	for range 100 {
		r.update(time.Microsecond, epoch)
	}
	if got := r.rto(&cfg, 0); got != cfg.RTOMin {
		t.Errorf("RTO on a fast path = %v, want the floor %v", got, cfg.RTOMin)
	}
}

func TestCongestionController(t *testing.T) {
	const mss = 1000
	c := newCongestionController(mss)
	t0 := epoch
	if !c.canSend(0, mss) || c.canSend(c.cwnd, 1) {
		t.Fatal("window admission wrong")
	}
	start := c.cwnd
	c.onAck(mss, t0, t0, false, 1)
	if c.cwnd != start+mss {
		t.Errorf("slow start: %d after one ACK, want %d", c.cwnd, start+mss)
	}
	// Random loss (no queueing delay, low loss rate) leaves the window.
	before := c.cwnd
	if c.onLoss(0, t0, t0.Add(time.Millisecond), false) || c.cwnd != before {
		t.Errorf("random loss cut the window: %d, want %d", c.cwnd, before)
	}
	// A loss halves the window when the path shows queueing delay...
	if !c.onLoss(0, t0, t0.Add(time.Millisecond), true) || c.cwnd != before/2 {
		t.Errorf("loss with queueing: cwnd %d, want %d", c.cwnd, before/2)
	}
	// ...once per episode: datagrams sent before the cut do not cut again,
	// nor do their acknowledgements grow the window.
	if c.onLoss(0, t0, t0.Add(2*time.Millisecond), true) {
		t.Error("second loss of the same episode cut again")
	}
	w := c.cwnd
	c.onAck(mss, t0, t0.Add(3*time.Millisecond), false, 1)
	if c.cwnd != w {
		t.Error("acknowledgement from before the cut grew the window")
	}
	// Queueing delay ends slow start without a loss.
	c = newCongestionController(mss)
	c.onAck(mss, t0, t0, true, 1)
	if c.inSlowStart() || c.cwnd != initialWindowDatagrams*mss {
		t.Errorf("queueing in slow start: cwnd %d ssthresh %d", c.cwnd, c.ssthresh)
	}
	// A loss rate above lossTolerance shrinks the window by 30% even
	// without queueing delay (a bottleneck too shallow to show delay);
	// one loss in ten never does.
	now := t0.Add(time.Second)
	for i := range 200 {
		if i%10 == 0 && c.onLoss(0, now, now, false) {
			t.Fatalf("cut at 10%% loss, rate %.3f", c.lossEWMA)
		}
		c.onAck(mss, now, now, false, 1)
	}
	w = c.cwnd
	cut := false
	for i := 0; !cut && i < 64; i++ {
		if i%2 == 0 {
			c.onAck(mss, now, now, false, 1)
			continue
		}
		cut = c.onLoss(0, now, now.Add(time.Duration(i)*time.Millisecond), false)
	}
	if !cut || c.lossEWMA <= lossTolerance {
		t.Fatalf("half the datagrams lost: cut %v, rate %.3f", cut, c.lossEWMA)
	}
	if w2 := c.cwnd; w2 > w*7/10+10*mss || w2 < w*7/10*7/10 {
		t.Errorf("cut to %d from about %d, want about 70%%", w2, w)
	}
	for range 10 {
		c.onLoss(0, t0.Add(time.Hour), t0.Add(time.Hour+time.Second), true)
		t0 = t0.Add(2 * time.Hour)
	}
	if c.cwnd < minWindowDatagrams*mss {
		t.Errorf("window %d below the minimum", c.cwnd)
	}
	// Pacing: a drained bucket makes the next datagram wait.
	rate := c.pacingRate(100*time.Millisecond, true)
	c.refill(t0, rate)
	for c.paced(t0, mss, rate).IsZero() {
		c.spend(mss)
	}
	if at := c.paced(t0, mss, rate); !at.After(t0) || at.Sub(t0) > time.Second {
		t.Errorf("paced until %v", at.Sub(t0))
	}
}

// The queueing signal ignores jitter (the recent minimum stays near the
// base) and sees a standing queue (every sample rises); the base RTT
// follows a lasting route change after baseRTTWindow.
func TestRTTQueueingSignal(t *testing.T) {
	const allowance = 10 * time.Millisecond
	var r rttEstimator
	if r.queueing(allowance) {
		t.Error("queueing before any sample")
	}
	now := epoch
	x := uint32(1)
	feed := func(n int, base, spread time.Duration) {
		for range n {
			x = x*1664525 + 1013904223
			r.update(base+time.Duration(uint64(x>>8)%uint64(spread+1)), now)
			now = now.Add(2 * time.Millisecond)
		}
	}
	// 50 ms with 40 ms of jitter: SRTT sits about 20 ms above the
	// minimum, the recent minimum does not.
	feed(500, 50*time.Millisecond, 40*time.Millisecond)
	if r.queueing(allowance) {
		t.Errorf("jitter taken for queueing: recent min %v, base %v, srtt %v", r.recentMin(), r.base, r.srtt)
	}
	// A queue adds 40 ms to every sample.
	feed(200, 90*time.Millisecond, 40*time.Millisecond)
	if !r.queueing(allowance) {
		t.Errorf("queue not seen: recent min %v, base %v", r.recentMin(), r.base)
	}
	// It drains.
	feed(200, 50*time.Millisecond, 40*time.Millisecond)
	if r.queueing(allowance) {
		t.Errorf("drained queue still seen: recent min %v, base %v", r.recentMin(), r.base)
	}
	// The route changes to 120 ms for good: after baseRTTWindow the base
	// follows and the path no longer looks queued.
	feed(int(baseRTTWindow/(2*time.Millisecond))+100, 120*time.Millisecond, 5*time.Millisecond)
	if r.queueing(allowance) || r.base < 120*time.Millisecond {
		t.Errorf("after a route change: base %v, recent min %v", r.base, r.recentMin())
	}
	if r.minRTT >= 60*time.Millisecond {
		t.Errorf("MinRTT %v forgot the all-time minimum", r.minRTT)
	}
}

// RTOCeiling is where the engine's backed-off timeout stops.
func TestRTOCeiling(t *testing.T) {
	for _, tt := range []struct {
		cfg  Config
		want time.Duration
	}{
		{Config{}, 1250 * time.Millisecond}, // DeadTimeout/8 under RTOMax
		{Config{DeadTimeout: time.Minute}, DefaultRTOMax},
		{Config{DeadTimeout: time.Second, RTOMin: 300 * time.Millisecond}, 300 * time.Millisecond},
	} {
		if got := tt.cfg.RTOCeiling(); got != tt.want {
			t.Errorf("%+v: RTOCeiling %v, want %v", tt.cfg, got, tt.want)
		}
		cfg, err := tt.cfg.withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		var r rttEstimator
		if got := r.rto(&cfg, 16); got != tt.want {
			t.Errorf("%+v: backed-off RTO %v, want the ceiling %v", tt.cfg, got, tt.want)
		}
	}
}
