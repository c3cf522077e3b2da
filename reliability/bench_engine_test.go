package reliability

import (
	"errors"
	"fmt"
	"math/rand/v2"
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

// Sending and receiving whole (unsplit) messages in steady state allocates
// nothing. A split message costs one allocation: the splitAssembler hands
// out each reassembled message in a buffer of its own.
func TestEngineSteadyStateAllocs(t *testing.T) {
	for _, c := range []struct {
		size   int
		perMsg float64
	}{{64, 0}, {1000, 0}, {4000, 1}} {
		l := newMemLink(t, 0)
		msg := make([]byte, c.size)
		l.transfer(t, msg, 5000)
		for range 300 { // warm up the exact pattern measured below
			l.transfer(t, msg, 10)
		}
		allocs := testing.AllocsPerRun(200, func() { l.transfer(t, msg, 10) })
		if allocs > 10*c.perMsg {
			t.Errorf("%d-byte messages: %.2f allocations per 10 messages in steady state, want at most %v", c.size, allocs, 10*c.perMsg)
		}
	}
}
