package netcode

import (
	"math"
	"testing"
)

func TestReplayProtection(t *testing.T) {
	type step struct {
		seq     uint64
		replay  bool // AlreadyReceived before Advance
		advance bool
	}
	const max = math.MaxUint64
	tests := []struct {
		name  string
		steps []step
	}{
		{"fresh window accepts 0", []step{{0, false, true}, {0, true, false}}},
		{"in order", []step{{0, false, true}, {1, false, true}, {2, false, true}, {1, true, false}}},
		{"out of order inside window", []step{{10, false, true}, {5, false, true}, {5, true, false}, {9, false, true}}},
		{"edge of window", []step{
			{300, false, true},
			{300 - ReplayWindowSize + 1, false, true}, // newest - 255: inside
			{300 - ReplayWindowSize, true, false},     // newest - 256: too old
			{0, true, false},
		}},
		{"window below 256 keeps everything", []step{{255, false, true}, {0, false, true}, {0, true, false}}},
		{"slot reused by newer sequence", []step{{1, false, true}, {257, false, true}, {1, true, false}}},
		{"not advanced means not received", []step{{7, false, false}, {7, false, true}, {7, true, false}}},
		{"wrap near 2^64", []step{
			{max - 1, false, true},
			{max, false, true},
			{max, true, false},
			{max - 1, true, false},
			{max - 255, false, true},
			{max - 256, true, false},
			{0, true, false},
		}},
		{"2^64-1 first", []step{{max, false, true}, {max, true, false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r ReplayProtection
			for i, s := range tt.steps {
				if got := r.AlreadyReceived(s.seq); got != s.replay {
					t.Fatalf("step %d: AlreadyReceived(%d) = %v, want %v", i, s.seq, got, s.replay)
				}
				if s.advance {
					r.Advance(s.seq)
				}
			}
		})
	}
}

func TestReplayReset(t *testing.T) {
	var r ReplayProtection
	r.Advance(1000)
	r.Reset()
	if r.AlreadyReceived(0) || r.AlreadyReceived(1000) || r.MostRecent() != 0 {
		t.Fatal("Reset kept state")
	}
}
