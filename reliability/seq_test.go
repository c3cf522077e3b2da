package reliability

import "testing"

func TestSeqArithmetic(t *testing.T) {
	tests := []struct {
		a, b uint32
		diff int32
	}{
		{0, 0, 0},
		{1, 0, 1},
		{0, 1, -1},
		{0, seqMask, 1}, // 0 follows 0xffffff across the wrap
		{seqMask, 0, -1},
		{5, seqMask - 4, 10},
		{seqHalf - 1, 0, seqHalf - 1},
		{seqHalf, 0, -seqHalf}, // exactly half: ambiguous, reads as behind
		{0x123456, 0x123456, 0},
	}
	for _, tt := range tests {
		if got := seqDiff(tt.a, tt.b); got != tt.diff {
			t.Errorf("seqDiff(%#x, %#x) = %d, want %d", tt.a, tt.b, got, tt.diff)
		}
		if got, want := seqLess(tt.a, tt.b), tt.diff < 0; got != want {
			t.Errorf("seqLess(%#x, %#x) = %v, want %v", tt.a, tt.b, got, want)
		}
	}
	if got := seqAdd(seqMask, 1); got != 0 {
		t.Errorf("seqAdd(0xffffff, 1) = %#x, want 0", got)
	}
	if got := seqAdd(seqMask-1, 5); got != 3 {
		t.Errorf("seqAdd(0xfffffe, 5) = %#x, want 3", got)
	}
	// Ordering stays consistent across the wrap for a run of consecutive values.
	for i := uint32(0); i < 100; i++ {
		a := seqAdd(seqMask-50, i)
		b := seqAdd(a, 1)
		if !seqLess(a, b) || seqLess(b, a) {
			t.Fatalf("%#x should be before %#x", a, b)
		}
	}
}
