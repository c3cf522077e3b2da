package raknet

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	goraknet "github.com/sandertv/go-raknet"
)

// One-way loopback throughput of reliable-ordered messages, raknet to
// raknet against go-raknet to go-raknet in the same run. An operation is
// one message written by the client and read by the server; the clock
// stops when the server has read the last one. go-raknet has no
// congestion control and drops a connection that a flood overwhelms (its
// receive window holds 2048 datagrams), so both are run with the same
// application-level window: the writer stays at most 256 messages, and at
// most 256 KiB, ahead of the reader. Each side reads with its library's
// cheapest call: ReadMessageInto a reused buffer here, ReadPacket (a new
// slice per message) in go-raknet.
//
//	go test -run XXX -bench LoopbackThroughput -benchtime 2s ./raknet/
func BenchmarkLoopbackThroughput(b *testing.B) {
	for _, size := range []int{64, 1024, 64 << 10} {
		b.Run(fmt.Sprintf("raknet/%dB", size), func(b *testing.B) { benchRaknet(b, size) })
		b.Run(fmt.Sprintf("goraknet/%dB", size), func(b *testing.B) { benchGoRaknet(b, size) })
	}
}

// window returns the semaphore that bounds messages in flight.
func window(size int) chan struct{} {
	return make(chan struct{}, max(1, min(256, (256<<10)/size)))
}

// stallTimeout: a run whose reader made no progress for this long has
// lost its connection without saying so (go-raknet can), and fails
// instead of hanging.
const stallTimeout = 10 * time.Second

// flowControl is the window between writer and reader, with a watchdog
// that notices a reader that stopped.
type flowControl struct {
	sem     chan struct{}
	read    atomic.Int64
	stalled chan struct{}
	stop    chan struct{}
}

func newFlowControl(size int) *flowControl {
	f := &flowControl{sem: window(size), stalled: make(chan struct{}), stop: make(chan struct{})}
	go func() {
		tick := time.NewTicker(stallTimeout)
		defer tick.Stop()
		last := int64(-1)
		for {
			select {
			case <-f.stop:
				return
			case <-tick.C:
			}
			if n := f.read.Load(); n != last {
				last = n
				continue
			}
			close(f.stalled)
			return
		}
	}()
	return f
}

// acquire takes a slot for the next message.
func (f *flowControl) acquire(b *testing.B) {
	select {
	case f.sem <- struct{}{}:
	case <-f.stalled:
		b.Fatalf("the reader made no progress for %v", stallTimeout)
	}
}

// release frees the slot of a message read.
func (f *flowControl) release() {
	<-f.sem
	f.read.Add(1)
}

// wait returns the reader's result.
func (f *flowControl) wait(b *testing.B, done chan error) {
	defer close(f.stop)
	select {
	case err := <-done:
		if err != nil {
			b.Fatal(err)
		}
	case <-f.stalled:
		b.Fatalf("the reader made no progress for %v", stallTimeout)
	}
}

func benchMessage(size int) []byte {
	msg := make([]byte, size)
	msg[0] = IDUserPacketEnum
	return msg
}

func reportThroughput(b *testing.B, size int, elapsed time.Duration) {
	b.SetBytes(int64(size))
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msgs/s")
}

func benchRaknet(b *testing.B, size int) {
	l, err := Listen("udp4", "127.0.0.1:0", ListenConfig{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	done := make(chan error, 1)
	flow := newFlowControl(size)
	go func() {
		c, err := l.AcceptConn(context.Background())
		if err != nil {
			done <- err
			return
		}
		buf := make([]byte, size)
		for range b.N {
			if _, err := c.ReadMessageInto(buf); err != nil {
				done <- err
				return
			}
			flow.release()
		}
		done <- nil
	}()
	c, err := DialContext(context.Background(), "udp", l.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	msg := benchMessage(size)
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		flow.acquire(b)
		if _, err := c.Write(msg); err != nil {
			b.Fatal(err)
		}
	}
	flow.wait(b, done)
	elapsed := time.Since(start)
	b.StopTimer()
	reportThroughput(b, size, elapsed)
}

func benchGoRaknet(b *testing.B, size int) {
	l, err := goraknet.Listen("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	done := make(chan error, 1)
	flow := newFlowControl(size)
	go func() {
		nc, err := l.Accept()
		if err != nil {
			done <- err
			return
		}
		c := nc.(*goraknet.Conn)
		for range b.N {
			if _, err := c.ReadPacket(); err != nil {
				done <- err
				return
			}
			flow.release()
		}
		done <- nil
	}()
	c, err := goraknet.Dial(l.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	// A go-raknet connection that is still closing slows the next one in
	// the process down badly; wait for it, so that every round of the
	// benchmark starts clean.
	defer func() {
		c.Close()
		<-c.Context().Done()
	}()
	msg := benchMessage(size)
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		flow.acquire(b)
		if _, err := c.Write(msg); err != nil {
			b.Fatal(err)
		}
	}
	flow.wait(b, done)
	elapsed := time.Since(start)
	b.StopTimer()
	reportThroughput(b, size, elapsed)
}
