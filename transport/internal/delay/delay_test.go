package delay

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func TestQueueOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		type got struct {
			v  int
			at time.Duration
		}
		start := time.Now()
		var mu sync.Mutex
		var out []got
		q := New(0, func(v int) {
			mu.Lock()
			out = append(out, got{v, time.Since(start)})
			mu.Unlock()
		}, nil)
		ms := time.Millisecond
		q.Schedule(start.Add(30*ms), 1)
		q.Schedule(start.Add(10*ms), 2)
		q.Schedule(start.Add(10*ms), 3) // same instant: after 2
		q.Schedule(start.Add(20*ms), 4)
		q.Schedule(start, 5) // due now: delivered at once
		time.Sleep(time.Second)
		mu.Lock()
		defer mu.Unlock()
		want := []got{{5, 0}, {2, 10 * ms}, {3, 10 * ms}, {4, 20 * ms}, {1, 30 * ms}}
		if len(out) != len(want) {
			t.Fatalf("got %v, want %v", out, want)
		}
		for i := range want {
			if out[i] != want[i] {
				t.Fatalf("got %v, want %v", out, want)
			}
		}
	})
}

func TestQueueLimitAndClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		delivered, discarded := 0, 0
		q := New(2, func(int) { delivered++ }, func(int) { discarded++ })
		now := time.Now()
		if !q.Schedule(now.Add(time.Second), 1) || !q.Schedule(now.Add(time.Second), 2) {
			t.Fatal("schedule within limit failed")
		}
		if q.Schedule(now.Add(time.Second), 3) {
			t.Fatal("schedule beyond limit succeeded")
		}
		if q.Len() != 2 {
			t.Fatalf("Len = %d, want 2", q.Len())
		}
		q.Close()
		if q.Schedule(now, 4) {
			t.Fatal("schedule after Close succeeded")
		}
		time.Sleep(2 * time.Second)
		if delivered != 0 || discarded != 2 {
			t.Fatalf("delivered %d discarded %d, want 0 and 2", delivered, discarded)
		}
	})
}

func TestCopyRelease(t *testing.T) {
	small := Copy([]byte("hello"))
	if string(*small) != "hello" {
		t.Fatalf("Copy = %q", *small)
	}
	Release(small)
	big := Copy(make([]byte, 5000))
	if len(*big) != 5000 {
		t.Fatalf("len = %d", len(*big))
	}
	Release(big) // not pooled; must not panic
}
