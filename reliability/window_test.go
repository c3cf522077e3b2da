package reliability

import (
	"math/rand/v2"
	"testing"
)

func TestReliableWindowBasics(t *testing.T) {
	var w reliableWindow // zero value: default size
	if v := w.check(0); v != windowNew {
		t.Fatalf("check(0) = %v", v)
	}
	w.mark(0)
	if v := w.check(0); v != windowDuplicate {
		t.Errorf("check(0) again = %v", v)
	}
	w.mark(2)
	if w.lowestMissing() != 1 {
		t.Errorf("base %d, want 1", w.lowestMissing())
	}
	if v := w.check(2); v != windowDuplicate {
		t.Errorf("check(2) = %v", v)
	}
	if v := w.check(1); v != windowNew {
		t.Errorf("check(1) = %v", v)
	}
	w.mark(1)
	if w.lowestMissing() != 3 {
		t.Errorf("base %d, want 3", w.lowestMissing())
	}
	// The furthest index accepted is base+size-1.
	if v := w.check(3 + windowDefaultSize - 1); v != windowNew {
		t.Errorf("edge of window: %v", v)
	}
	if v := w.check(3 + windowDefaultSize); v != windowTooFarAhead {
		t.Errorf("past the window: %v", v)
	}
	// Anything behind base is a duplicate, however old.
	if v := w.check(seqAdd(3, seqSpace-1000000)); v != windowDuplicate {
		t.Errorf("far behind: %v", v)
	}
}

func TestReliableWindowSizes(t *testing.T) {
	for _, tt := range []struct{ in, want int }{{0, windowDefaultSize}, {1, 64}, {100, 128}, {4096, 4096}, {1 << 30, windowMaxSize}} {
		if got := newReliableWindow(tt.in); int(got.size) != tt.want {
			t.Errorf("newReliableWindow(%d).size = %d, want %d", tt.in, got.size, tt.want)
		}
	}
}

// TestReliableWindowWrap sends indexes across the 24-bit wrap, reordered
// and duplicated, and checks each is accepted exactly once.
func TestReliableWindowWrap(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	w := newReliableWindow(256)
	w.base = seqMask - 5000
	w.init()
	accepted := map[uint32]int{}
	const total = 20000
	var pending []uint32
	next := w.base
	for sent := 0; sent < total || len(pending) > 0; {
		// Like an honest sender, never get a window ahead of the lowest
		// index not yet received.
		for seqDiff(next, w.base) < 256 && sent < total {
			pending = append(pending, next)
			next = seqAdd(next, 1)
			sent++
		}
		i := rng.IntN(len(pending))
		idx := pending[i]
		if rng.IntN(4) != 0 { // delivered; otherwise duplicated later
			pending = append(pending[:i], pending[i+1:]...)
		}
		switch w.check(idx) {
		case windowNew:
			w.mark(idx)
			accepted[idx]++
		case windowTooFarAhead:
			t.Fatalf("index %#x refused with base %#x", idx, w.base)
		}
	}
	if len(accepted) != total {
		t.Fatalf("accepted %d distinct indexes, want %d", len(accepted), total)
	}
	for idx, n := range accepted {
		if n != 1 {
			t.Fatalf("index %#x accepted %d times", idx, n)
		}
	}
	if w.base != next {
		t.Errorf("base %#x, want %#x", w.base, next)
	}
}

func BenchmarkReliableWindow(b *testing.B) {
	w := newReliableWindow(0)
	i := uint32(0)
	b.ReportAllocs()
	for b.Loop() {
		// Pairs out of order: i+1 then i.
		for _, k := range [2]uint32{seqAdd(i, 1), i} {
			if w.check(k) == windowNew {
				w.mark(k)
			}
		}
		i = seqAdd(i, 2)
	}
}
