package reliability

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
)

// memLink moves datagrams between two engines in memory, with seeded
// loss and no allocation in steady state: datagram buffers are recycled.
type memLink struct {
	e     [2]*Engine
	now   time.Time
	rng   *rand.Rand
	loss  float64
	wire  [2]fifo[[]byte] // datagrams in flight toward engine i
	free  [][]byte
	moved int
	got   int // messages delivered to engine 1
	bytes int
}

func newMemLink(tb testing.TB, loss float64) *memLink {
	l := &memLink{now: epoch, rng: rand.New(rand.NewPCG(7, 11)), loss: loss}
	for i := range l.e {
		e, err := New(Config{})
		if err != nil {
			tb.Fatal(err)
		}
		l.e[i] = e
	}
	return l
}

// round lets time pass, exchanges every datagram due and drains messages.
func (l *memLink) round(step time.Duration) {
	l.now = l.now.Add(step)
	l.moved = 0
	for side, e := range l.e {
		for {
			var b []byte
			if n := len(l.free); n > 0 {
				b = l.free[n-1][:0]
				l.free = l.free[:n-1]
			}
			b, ok := e.AppendDatagram(b, l.now)
			if !ok {
				l.free = append(l.free, b)
				break
			}
			l.moved++
			if l.loss > 0 && l.rng.Float64() < l.loss {
				l.free = append(l.free, b)
				continue
			}
			l.wire[1-side].push(b)
		}
	}
	for side, e := range l.e {
		for l.wire[side].len() > 0 {
			b := l.wire[side].pop()
			e.Receive(b, l.now)
			l.free = append(l.free, b)
		}
		for {
			m, ok := e.ReadMessage()
			if !ok {
				break
			}
			l.got++
			l.bytes += len(m.Payload)
		}
	}
	if l.moved == 0 {
		// Nothing to exchange: jump to the next timer.
		var t time.Time
		for _, e := range l.e {
			if nt := e.NextTimeout(); !nt.IsZero() && (t.IsZero() || nt.Before(t)) {
				t = nt
			}
		}
		if t.After(l.now) {
			l.now = t
		}
	}
}

// transfer sends n messages of msg from engine 0 to engine 1 and waits
// until all have been delivered.
func (l *memLink) transfer(tb testing.TB, msg []byte, n int) {
	want := l.got + n
	for sent := 0; sent < n; {
		_, err := l.e[0].Send(msg, ReliableOrdered, 0, Medium, l.now)
		switch {
		case err == nil:
			sent++
			continue
		case !errors.Is(err, ErrQueueFull):
			tb.Fatal(err)
		}
		l.round(100 * time.Microsecond)
	}
	for l.got < want {
		l.round(100 * time.Microsecond)
		if l.now.Sub(epoch) > 24*time.Hour {
			tb.Fatal("transfer stalled")
		}
	}
}

// BenchmarkEngineReliableOrdered measures engine-to-engine throughput in
// memory (no sockets, no copies beyond the engines' own): one op is one
// reliable-ordered message sent, acknowledged and delivered.
func BenchmarkEngineReliableOrdered(b *testing.B) {
	for _, loss := range []float64{0, 0.05} {
		for _, size := range []int{64, 1 << 10, 64 << 10, 1 << 20} {
			b.Run(fmt.Sprintf("size=%d/loss=%.0f%%", size, loss*100), func(b *testing.B) {
				l := newMemLink(b, loss)
				msg := make([]byte, size)
				// Warm up: grow rings and fill buffer pools.
				l.transfer(b, msg, max(64, (32<<20)/size))
				b.SetBytes(int64(size))
				b.ReportAllocs()
				b.ResetTimer()
				l.transfer(b, msg, b.N)
				b.StopTimer()
				sec := b.Elapsed().Seconds()
				b.ReportMetric(float64(b.N)/sec, "msgs/s")
				b.ReportMetric(float64(b.N*size)/sec/1e6, "MB/s")
			})
		}
	}
}

// TestEngineSteadyStateAllocs checks that, once warmed up, sending,
// acknowledging and delivering messages allocates nothing, on both sides,
// for whole and split messages, with and without loss: payload buffers
// (the send queue's copies, reassembled messages, messages held for
// ordering behind a loss, delivered messages) are recycled through the
// engines' payload pools.
func TestEngineSteadyStateAllocs(t *testing.T) {
	for _, c := range []struct {
		size        int
		loss        float64
		batch, runs int
	}{
		{64, 0, 10, 100},
		{1000, 0, 10, 100},
		{4000, 0, 10, 50},
		{64 << 10, 0, 2, 10},
		{1 << 20, 0, 1, 3},
		{64, 0.05, 10, 100},
		{1000, 0.05, 10, 100},
		{4000, 0.05, 10, 50},
		{64 << 10, 0.05, 2, 10},
		{1 << 20, 0.05, 1, 3},
	} {
		t.Run(fmt.Sprintf("size=%d/loss=%.0f%%", c.size, c.loss*100), func(t *testing.T) {
			l := newMemLink(t, c.loss)
			msg := make([]byte, c.size)
			// Warm up on the exact pattern measured below, long enough
			// for the rings, pools and holds to reach their working size.
			l.transfer(t, msg, max(100, (8<<20)/c.size))
			for range 4 * c.runs {
				l.transfer(t, msg, c.batch)
			}
			// testing.AllocsPerRun rounds down; count every allocation.
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range c.runs {
				l.transfer(t, msg, c.batch)
			}
			runtime.ReadMemStats(&after)
			if n := after.Mallocs - before.Mallocs; n != 0 {
				t.Errorf("%d allocations for %d messages in steady state, want 0", n, c.runs*c.batch)
			}
		})
	}
}
