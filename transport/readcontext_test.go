package transport_test

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netrak/netrak/transport"
	"github.com/netrak/netrak/transport/simnet"
)

func TestReadContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := simnet.New(1)
		a, _ := n.Listen(netip.MustParseAddrPort("10.0.0.1:1"))
		b, _ := n.Listen(netip.MustParseAddrPort("10.0.0.2:2"))
		defer a.Close()
		defer b.Close()
		buf := make([]byte, 16)

		// Cancelled while blocked: ctx.Err(), after exactly the timeout.
		start := time.Now()
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		_, _, err := transport.ReadContext(ctx, b, buf)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want context.DeadlineExceeded", err)
		}
		if d := time.Since(start); d != 3*time.Second {
			t.Fatalf("returned after %v, want 3s", d)
		}

		// The deadline used to interrupt the read does not leak into the
		// next one.
		go func() {
			time.Sleep(time.Second)
			a.WriteTo([]byte("hi"), b.LocalAddr())
		}()
		m, from, err := transport.ReadContext(context.Background(), b, buf)
		if err != nil || string(buf[:m]) != "hi" || from != a.LocalAddr() {
			t.Fatalf("ReadContext = %q, %v, %v", buf[:m], from, err)
		}

		// Data before cancellation is returned normally.
		ctx, cancel = context.WithCancel(t.Context())
		a.WriteTo([]byte("yo"), b.LocalAddr())
		m, _, err = transport.ReadContext(ctx, b, buf)
		if err != nil || string(buf[:m]) != "yo" {
			t.Fatalf("ReadContext = %q, %v", buf[:m], err)
		}

		// An already cancelled context fails at once.
		cancel()
		if _, _, err := transport.ReadContext(ctx, b, buf); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}

		// Close still wins over a live context.
		go func() {
			time.Sleep(time.Second)
			b.Close()
		}()
		if _, _, err := transport.ReadContext(t.Context(), b, buf); err == nil || errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want net.ErrClosed", err)
		}
	})
}

func TestImpairmentValidate(t *testing.T) {
	good := transport.Impairment{Latency: time.Millisecond, Loss: 1, Duplicate: 0.5, MTU: 1200, Bandwidth: 1000}
	if err := good.Validate(); err != nil {
		t.Fatalf("Validate(%+v) = %v", good, err)
	}
	for _, bad := range []transport.Impairment{
		{Latency: -1}, {Jitter: -1}, {Loss: 1.5}, {Duplicate: -0.1}, {Reorder: 2},
		{Bandwidth: -1}, {QueueLimit: -1}, {MTU: -1},
	} {
		if err := bad.Validate(); !errors.Is(err, transport.ErrBadImpairment) {
			t.Errorf("Validate(%+v) = %v, want ErrBadImpairment", bad, err)
		}
	}
}

func TestShaperSameSeedSameFates(t *testing.T) {
	imp := transport.Impairment{Latency: 10 * time.Millisecond, Jitter: 5 * time.Millisecond, Loss: 0.3, Duplicate: 0.1, Reorder: 0.1, Bandwidth: 1e6}
	s1 := transport.NewShaper(imp, 9, 1, nil)
	s2 := transport.NewShaper(imp, 9, 1, nil)
	s3 := transport.NewShaper(imp, 9, 2, nil)
	now := time.Unix(1000, 0)
	differs := false
	for i := range 1000 {
		at := now.Add(time.Duration(i) * time.Millisecond)
		f1, f2, f3 := s1.Decide(at, 500), s2.Decide(at, 500), s3.Decide(at, 500)
		if f1 != f2 {
			t.Fatalf("datagram %d: %+v != %+v", i, f1, f2)
		}
		differs = differs || f1 != f3
	}
	if !differs {
		t.Fatal("different streams gave the same fates")
	}
}
