package raknet

import (
	"context"
	"fmt"
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
	sem := window(size)
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
			<-sem
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
		sem <- struct{}{}
		if _, err := c.Write(msg); err != nil {
			b.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		b.Fatal(err)
	}
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
	sem := window(size)
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
			<-sem
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
		sem <- struct{}{}
		if _, err := c.Write(msg); err != nil {
			b.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	reportThroughput(b, size, elapsed)
}
