package endpoint

import (
	"context"
	"errors"
	"net"
	"testing"
)

func TestBacklog(t *testing.T) {
	b := NewBacklog[int](2, "test", nil)
	if !b.Offer(1) || !b.Offer(2) {
		t.Fatal("offers within the bound refused")
	}
	if b.Offer(3) {
		t.Fatal("an offer past the bound was kept")
	}
	ctx := context.Background()
	if c, err := b.Accept(ctx); c != 1 || err != nil {
		t.Fatalf("Accept = %d, %v", c, err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	b.Accept(ctx) // takes 2
	if _, err := b.Accept(cancelled); !errors.Is(err, context.Canceled) {
		t.Fatalf("Accept with an ended context = %v", err)
	}

	cause := errors.New("socket broken")
	b.Offer(4)
	b.Close(cause)
	b.Close(nil) // the first Close decides
	if b.Offer(5) {
		t.Fatal("an offer after Close was kept")
	}
	_, err := b.Accept(ctx)
	var op *net.OpError
	if !errors.As(err, &op) || op.Net != "test" || !errors.Is(err, cause) {
		t.Fatalf("Accept after Close = %v", err)
	}
	select {
	case <-b.Done():
	default:
		t.Fatal("Done not closed")
	}

	b = NewBacklog[int](1, "test", nil)
	b.Close(nil)
	if _, err := b.Accept(ctx); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Accept after Close(nil) = %v, want net.ErrClosed", err)
	}
}
