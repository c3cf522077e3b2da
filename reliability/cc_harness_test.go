package reliability

import (
	"flag"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/netrak/netrak/internal/rakwire"
	"github.com/netrak/netrak/transport"
)

// The congestion-control harness: bulk reliable-ordered transfers between
// engines over links shaped by transport.Shaper, the impairment model the
// simulated network and the UDP relay apply, driven by one goroutine and a
// fake clock that jumps from event to event. Unlike simnet, whose links
// are per address pair, it lets several flows share one bottleneck (one
// Shaper, one queue), and it is deterministic by construction: every
// input is a function of the seeds.

var ccReport = flag.Bool("ccreport", false, "print the congestion-control scenario table")

// ccLink is one scenario's path.
type ccLink struct {
	name  string
	fwd   transport.Impairment // data direction, shared by every flow
	rev   transport.Impairment // ACK direction, shared by every flow
	flows int
	// nakAtOnce models the original library's receiver, which NAKs a gap
	// in datagram numbers as soon as it sees it: every data datagram that
	// skips numbers makes the harness send the sender a NAK for them, on
	// top of the receiving engine's own (later) NAKs.
	nakAtOnce bool
}

// ccResult is what one run measured.
type ccResult struct {
	elapsed     time.Duration // until every flow delivered everything
	flowTime    []time.Duration
	bytes       int // per flow
	resends     uint64
	lost        uint64 // datagrams the senders declared lost
	linkDropped uint64 // data datagrams the forward link dropped (loss + queue)
	queueDrops  uint64
	sent        uint64        // data datagrams offered to the forward link
	meanRTT     time.Duration // flow 0's smoothed RTT, averaged over time
}

func (r ccResult) goodput() float64 {
	return float64(r.bytes) * float64(len(r.flowTime)) / r.elapsed.Seconds() / 1e6
}

// spurious is resends beyond what the link's drops justify.
func (r ccResult) spurious() int64 { return int64(r.lost) - int64(r.linkDropped) }

type ccPkt struct {
	at   time.Time
	seq  int
	flow int
	to   int // 0 sender, 1 receiver
	b    []byte
}

// ccMessageSizes is the bulk workload: total bytes in messages of 1 KiB to
// 64 KiB, sizes from a fixed sequence.
func ccMessageSizes(total int) []int {
	var out []int
	x := uint32(12345)
	for sum := 0; sum < total; {
		x = x*1103515245 + 12345
		size := 1024 << ((x >> 16) % 7) // 1, 2, 4, ... 64 KiB
		size = min(size, total-sum)
		out = append(out, size)
		sum += size
	}
	return out
}

// runCC transfers total bytes per flow, each flow's sender starting
// stagger after the previous one, and fails tb past limit of simulated
// time.
func runCC(tb testing.TB, l ccLink, seed uint64, total int, stagger, limit time.Duration) ccResult {
	tb.Helper()
	var fc, rc transport.ImpairmentCounters
	fwd := transport.NewShaper(l.fwd, seed, 1, &fc)
	rev := transport.NewShaper(l.rev, seed, 2, &rc)
	type flow struct {
		e       [2]*Engine
		start   time.Time
		pending []int
		got     int
		done    time.Time
		highest int64 // newest datagram number the receiver saw; -1 none
	}
	now := epoch
	flows := make([]*flow, l.flows)
	sizes := ccMessageSizes(total)
	for i := range flows {
		f := &flow{start: now.Add(time.Duration(i) * stagger), pending: sizes, highest: -1}
		for j := range f.e {
			e, err := New(Config{})
			if err != nil {
				tb.Fatal(err)
			}
			f.e[j] = e
		}
		flows[i] = f
	}
	var q []ccPkt
	seq := 0
	var buf []byte
	msg := make([]byte, 64<<10)
	var dataSent uint64
	pump := func() {
		for fi, f := range flows {
			if now.Before(f.start) {
				continue
			}
			for len(f.pending) > 0 {
				if _, err := f.e[0].Send(msg[:f.pending[0]], ReliableOrdered, 0, Medium, now); err != nil {
					break
				}
				f.pending = f.pending[1:]
			}
			for side, e := range f.e {
				for {
					var ok bool
					buf, ok = e.AppendDatagram(buf[:0], now)
					if !ok {
						break
					}
					sh := fwd
					if side == 1 {
						sh = rev
					} else if rakwire.ClassifyDatagram(buf) == rakwire.DatagramData {
						dataSent++
					}
					fate := sh.Decide(now, len(buf))
					for c := range fate.Copies {
						seq++
						k := ccPkt{at: now.Add(fate.Delay[c]), seq: seq, flow: fi, to: 1 - side, b: slices.Clone(buf)}
						i, _ := slices.BinarySearchFunc(q, k, func(a, b ccPkt) int {
							if c := a.at.Compare(b.at); c != 0 {
								return c
							}
							return a.seq - b.seq
						})
						q = slices.Insert(q, i, k)
					}
				}
			}
			for {
				m, ok := f.e[1].ReadMessage()
				if !ok {
					break
				}
				f.got += len(m.Payload)
				if f.got == total && f.done.IsZero() {
					f.done = now
				}
			}
		}
	}
	finished := func() bool {
		for _, f := range flows {
			if f.done.IsZero() {
				return false
			}
		}
		return true
	}
	end := now.Add(limit)
	rttAt := now
	var rttSum time.Duration
	var rttN int
	pump()
	for !finished() {
		var t time.Time
		earliest := func(c time.Time) {
			if !c.IsZero() && (t.IsZero() || c.Before(t)) {
				t = c
			}
		}
		if len(q) > 0 {
			earliest(q[0].at)
		}
		for _, f := range flows {
			if now.Before(f.start) {
				earliest(f.start)
				continue
			}
			for _, e := range f.e {
				earliest(e.NextTimeout())
			}
		}
		if t.IsZero() {
			tb.Fatalf("%s: simulation idle at %v", l.name, now.Sub(epoch))
		}
		if t.After(now) {
			now = t
		}
		if now.After(end) {
			for i, f := range flows {
				tb.Logf("flow %d: got %d of %d; sender %+v", i, f.got, total, f.e[0].Stats())
			}
			tb.Fatalf("%s: transfer did not finish within %v", l.name, limit)
		}
		for ; !rttAt.After(now); rttAt = rttAt.Add(10 * time.Millisecond) {
			if e := flows[0].e[0]; flows[0].done.IsZero() && e.rtt.hasSample {
				rttSum += e.rtt.srtt
				rttN++
			}
		}
		for len(q) > 0 && !q[0].at.After(now) {
			k := q[0]
			q = q[1:]
			f := flows[k.flow]
			f.e[k.to].Receive(k.b, now)
			if l.nakAtOnce && k.to == 1 && rakwire.ClassifyDatagram(k.b) == rakwire.DatagramData {
				num := int64(k.b[1]) | int64(k.b[2])<<8 | int64(k.b[3])<<16
				if num > f.highest+1 {
					nak := encodeAck(tb, rakwire.Ack{NAK: true, Ranges: []rakwire.Range{{Min: uint32(f.highest + 1), Max: uint32(num - 1)}}})
					if fate := rev.Decide(now, len(nak)); fate.Copies > 0 {
						seq++
						k := ccPkt{at: now.Add(fate.Delay[0]), seq: seq, flow: k.flow, to: 0, b: nak}
						i, _ := slices.BinarySearchFunc(q, k, func(a, b ccPkt) int {
							if c := a.at.Compare(b.at); c != 0 {
								return c
							}
							return a.seq - b.seq
						})
						q = slices.Insert(q, i, k)
					}
				}
				f.highest = max(f.highest, num)
			}
		}
		pump()
	}
	r := ccResult{bytes: total, sent: dataSent}
	if rttN > 0 {
		r.meanRTT = rttSum / time.Duration(rttN)
	}
	for _, f := range flows {
		r.flowTime = append(r.flowTime, f.done.Sub(f.start))
		r.elapsed = max(r.elapsed, f.done.Sub(epoch))
		s := f.e[0].Stats()
		r.resends += s.Resends
		r.lost += s.DatagramsLost
	}
	fs := fc.Snapshot()
	r.linkDropped = fs.DroppedLoss + fs.DroppedQueue
	r.queueDrops = fs.DroppedQueue
	return r
}

// ccScenarios are the links of the report. RTTs are two one-way latencies.
var ccScenarios = []ccLink{
	{name: "a: clean 30ms, 2MB/s cap, 64KB queue",
		fwd:   transport.Impairment{Latency: 15 * time.Millisecond, Bandwidth: 2e6, QueueLimit: 64 << 10},
		rev:   transport.Impairment{Latency: 15 * time.Millisecond},
		flows: 1},
	{name: "b: 10% loss, 60ms, jitter ±10ms",
		fwd:   transport.Impairment{Latency: 30 * time.Millisecond, Jitter: 10 * time.Millisecond, Loss: 0.10},
		rev:   transport.Impairment{Latency: 30 * time.Millisecond, Jitter: 10 * time.Millisecond, Loss: 0.10},
		flows: 1},
	{name: "c: 2% loss, 60ms",
		fwd:   transport.Impairment{Latency: 30 * time.Millisecond, Loss: 0.02},
		rev:   transport.Impairment{Latency: 30 * time.Millisecond, Loss: 0.02},
		flows: 1},
	{name: "d: 60ms, jitter ±10ms, 2% reorder, 2% dup",
		fwd:   transport.Impairment{Latency: 30 * time.Millisecond, Jitter: 10 * time.Millisecond, Reorder: 0.02, Duplicate: 0.02},
		rev:   transport.Impairment{Latency: 30 * time.Millisecond, Jitter: 10 * time.Millisecond, Reorder: 0.02, Duplicate: 0.02},
		flows: 1},
	{name: "e: 2 flows, 30ms, 2MB/s cap, 64KB queue",
		fwd:   transport.Impairment{Latency: 15 * time.Millisecond, Bandwidth: 2e6, QueueLimit: 64 << 10},
		rev:   transport.Impairment{Latency: 15 * time.Millisecond},
		flows: 2},
	{name: "f: demo link: 10% loss, 30±10ms, 2% dup, 2% reorder",
		fwd:   transport.Impairment{Latency: 30 * time.Millisecond, Jitter: 10 * time.Millisecond, Loss: 0.10, Reorder: 0.02, Duplicate: 0.02},
		rev:   transport.Impairment{Latency: 30 * time.Millisecond, Jitter: 10 * time.Millisecond, Loss: 0.10, Reorder: 0.02, Duplicate: 0.02},
		flows: 1},
	{name: "g: 30ms, 2MB/s cap, shallow 8KB queue",
		fwd:   transport.Impairment{Latency: 15 * time.Millisecond, Bandwidth: 2e6, QueueLimit: 8 << 10},
		rev:   transport.Impairment{Latency: 15 * time.Millisecond},
		flows: 1},
	{name: "h: 60ms ±5ms, 2MB/s cap, 64KB queue, 2% loss",
		fwd:   transport.Impairment{Latency: 30 * time.Millisecond, Jitter: 5 * time.Millisecond, Bandwidth: 2e6, QueueLimit: 64 << 10, Loss: 0.02},
		rev:   transport.Impairment{Latency: 30 * time.Millisecond, Jitter: 5 * time.Millisecond, Loss: 0.02},
		flows: 1},
	{name: "j: 30ms, 2MB/s cap, deep 256KB queue",
		fwd:   transport.Impairment{Latency: 15 * time.Millisecond, Bandwidth: 2e6, QueueLimit: 256 << 10},
		rev:   transport.Impairment{Latency: 15 * time.Millisecond},
		flows: 1},
	{name: "k: d with a receiver that NAKs at once",
		fwd:       transport.Impairment{Latency: 30 * time.Millisecond, Jitter: 10 * time.Millisecond, Reorder: 0.02, Duplicate: 0.02},
		rev:       transport.Impairment{Latency: 30 * time.Millisecond, Jitter: 10 * time.Millisecond, Reorder: 0.02, Duplicate: 0.02},
		flows:     1,
		nakAtOnce: true},
	{name: "l: f with a receiver that NAKs at once",
		fwd:       transport.Impairment{Latency: 30 * time.Millisecond, Jitter: 10 * time.Millisecond, Loss: 0.10, Reorder: 0.02, Duplicate: 0.02},
		rev:       transport.Impairment{Latency: 30 * time.Millisecond, Jitter: 10 * time.Millisecond, Loss: 0.10, Reorder: 0.02, Duplicate: 0.02},
		flows:     1,
		nakAtOnce: true},
	{name: "i: 5% loss, 100ms, jitter ±25ms",
		fwd:   transport.Impairment{Latency: 50 * time.Millisecond, Jitter: 25 * time.Millisecond, Loss: 0.05},
		rev:   transport.Impairment{Latency: 50 * time.Millisecond, Jitter: 25 * time.Millisecond, Loss: 0.05},
		flows: 1},
}

const (
	ccBytes   = 2 << 20
	ccStagger = 500 * time.Millisecond
	ccLimit   = 600 * time.Second
)

// TestCongestionReport prints the scenario table with -ccreport.
func TestCongestionReport(t *testing.T) {
	if !*ccReport {
		t.Skip("run with -ccreport to print the congestion-control table")
	}
	for seed := uint64(1); seed <= 3; seed++ {
		t.Logf("seed %d", seed)
		t.Logf("%-52s %6s %7s %5s %5s %8s %6s %6s %s", "link", "MB/s", "resends", "lost", "sent", "linkdrop", "qdrops", "srtt", "flow times")
		for _, l := range ccScenarios {
			r := runCC(t, l, seed, ccBytes, ccStagger, ccLimit)
			t.Logf("%-52s %6.3f %7d %5d %5d %8d %6d %6v %v", l.name, r.goodput(), r.resends, r.lost, r.sent, r.linkDropped, r.queueDrops, r.meanRTT.Round(time.Millisecond), fmt.Sprint(r.flowTime))
		}
	}
}

// TestCongestionScenarios holds the controller to what it achieves on the
// report's links, over three seeds, with thresholds well inside the
// measured figures (the harness is deterministic, so they do not flake).
// The figures of the controller it replaced (RakNet-style halving on
// loss, SRTT-based queueing test, fixed 20 ms NAK delay) are in the
// comments: b, c, d and f are where it collapsed.
func TestCongestionScenarios(t *testing.T) {
	byName := func(prefix string) ccLink {
		for _, l := range ccScenarios {
			if l.name[:2] == prefix {
				return l
			}
		}
		t.Fatalf("no scenario %q", prefix)
		return ccLink{}
	}
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			run := func(name string) ccResult {
				r := runCC(t, byName(name), seed, ccBytes, ccStagger, 120*time.Second)
				t.Logf("%s %.3f MB/s, %d resends, %d lost, %d link drops (%d queue) of %d sent",
					name, r.goodput(), r.resends, r.lost, r.linkDropped, r.queueDrops, r.sent)
				return r
			}
			// a: a capped link with a BDP-sized queue: the link stays busy
			// (≥ 70% of the cap; measured 1.72 MB/s, was 1.82) and the queue
			// overflows mostly while slow start finds the cap (measured 154
			// drops in 1,656 datagrams, was 180 in 1,682).
			if r := run("a:"); r.goodput() < 1.4 || r.queueDrops > 400 {
				t.Errorf("a: %.3f MB/s with %d queue drops; want ≥ 1.4 MB/s and ≤ 400", r.goodput(), r.queueDrops)
			}
			// b: 10% random loss both ways with jitter is not congestion
			// (measured 2.2 MB/s, was 0.10).
			if r := run("b:"); r.goodput() < 1.0 {
				t.Errorf("b: %.3f MB/s, want ≥ 1.0", r.goodput())
			}
			// c: 2% loss (measured 3.1 MB/s, was 0.45).
			if r := run("c:"); r.goodput() < 1.5 {
				t.Errorf("c: %.3f MB/s, want ≥ 1.5", r.goodput())
			}
			// d: jitter, reordering and duplication without loss: nearly
			// nothing is resent (measured 1 spurious resend, was 83) and the
			// rate holds (measured 3.4 MB/s, was 0.26).
			if r := run("d:"); r.lost > 10 || r.goodput() < 1.5 {
				t.Errorf("d: %d datagrams taken for lost with no loss, %.3f MB/s; want ≤ 10 and ≥ 1.5 MB/s", r.lost, r.goodput())
			}
			// e: two flows on one capped link share it without collapse:
			// together ≥ 70% of the cap (measured 1.84 MB/s, was 1.62), and
			// neither takes more than three times as long as the other
			// (measured 2.3 s and 1.7 s).
			if r := run("e:"); r.goodput() < 1.4 || max(r.flowTime[0], r.flowTime[1]) > 3*min(r.flowTime[0], r.flowTime[1]) {
				t.Errorf("e: %.3f MB/s, flow times %v", r.goodput(), r.flowTime)
			}
			// f: the demo's link (measured 2.1 MB/s, was 0.09).
			if r := run("f:"); r.goodput() < 1.0 {
				t.Errorf("f: %.3f MB/s, want ≥ 1.0", r.goodput())
			}
			// g: a queue too shallow to show delay: the loss rate alone
			// backs off, keeping drops bounded (measured 0.63 MB/s with 17%
			// of datagrams dropped; was 0.33 MB/s with 6%: the price of
			// tolerating random loss, see congestionController).
			if r := run("g:"); r.goodput() < 0.4 || r.queueDrops*4 > r.sent {
				t.Errorf("g: %.3f MB/s, %d of %d dropped; want ≥ 0.4 MB/s and ≤ 25%%", r.goodput(), r.queueDrops, r.sent)
			}
			// i: heavy jitter (±25 ms each way) with 5% loss (measured
			// 1.7 MB/s).
			if r := run("i:"); r.goodput() < 0.8 {
				t.Errorf("i: %.3f MB/s, want ≥ 0.8", r.goodput())
			}
			// j: a deep (128 ms) queue: slow start ends on the delay signal
			// before the queue overflows and drains what it built (measured
			// 6 drops and a mean SRTT of 66 ms on the 30 ms path; was 208
			// drops and 91 ms).
			if r := run("j:"); r.goodput() < 1.4 || r.queueDrops > 40 || r.meanRTT > 80*time.Millisecond {
				t.Errorf("j: %.3f MB/s, %d queue drops, mean SRTT %v", r.goodput(), r.queueDrops, r.meanRTT)
			}
			// k, l: a receiver that NAKs every gap at once, as the original
			// library does, on a path that reorders: once NAKs prove
			// premature the sender waits out the reordering before
			// resending (k measured 16 to 19 datagrams taken for lost with
			// no loss and 3.2 MB/s, was about 400 and 0.05 MB/s; l measured
			// 1.6 to 2.0 MB/s, was 0.04).
			if r := run("k:"); r.lost > 60 || r.goodput() < 1.5 {
				t.Errorf("k: %d datagrams taken for lost with no loss, %.3f MB/s", r.lost, r.goodput())
			}
			if r := run("l:"); r.goodput() < 0.8 {
				t.Errorf("l: %.3f MB/s, want ≥ 0.8", r.goodput())
			}
			// h: random loss on a capped link: the loss is ignored, the
			// queue still halves the window (measured 1.5 MB/s with 11% of
			// datagrams dropped at the queue; was 0.40 MB/s, never reaching
			// the cap).
			if r := run("h:"); r.goodput() < 0.9 || r.queueDrops*5 > r.sent {
				t.Errorf("h: %.3f MB/s, %d of %d dropped at the queue", r.goodput(), r.queueDrops, r.sent)
			}
		})
	}
}
