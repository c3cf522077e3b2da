package driver

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// recorder is a task that records when it runs and asks next, if set, for
// its next wake-up.
type recorder struct {
	start time.Time
	mu    sync.Mutex
	runs  []time.Duration // since start
	next  func(now time.Time) time.Time
}

func (r *recorder) Run(now time.Time) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runs = append(r.runs, now.Sub(r.start))
	if r.next == nil {
		return time.Time{}
	}
	return r.next(now)
}

// check waits until the loop has done everything due by now, then compares
// the runs so far with want.
func (r *recorder) check(t *testing.T, want ...time.Duration) {
	t.Helper()
	synctest.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !slices.Equal(r.runs, want) {
		t.Fatalf("%v in: runs at %v, want %v", time.Since(r.start), r.runs, want)
	}
}

// until returns a next func that asks for the wake-up at, then nothing.
func until(at time.Time) func(time.Time) time.Time {
	return func(now time.Time) time.Time {
		if now.Before(at) {
			return at
		}
		return time.Time{}
	}
}

// every returns a next func that asks for a wake-up d after each run.
func every(d time.Duration) func(time.Time) time.Time {
	return func(now time.Time) time.Time { return now.Add(d) }
}

func TestLoopRunsAtWakeUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := NewLoop()
		defer l.Stop()
		start := time.Now()
		r := &recorder{start: start, next: until(start.Add(time.Second))}
		h := l.Add(r)
		r.check(t) // Add alone schedules nothing
		h.WakeBy(start)
		r.check(t, 0)
		time.Sleep(time.Second - time.Nanosecond)
		r.check(t, 0)
		time.Sleep(time.Nanosecond)
		r.check(t, 0, time.Second)
		// Run returned zero: nothing runs however long the loop waits.
		time.Sleep(time.Hour)
		r.check(t, 0, time.Second)
		// Until something asks.
		h.WakeBy(time.Now().Add(5 * time.Second))
		time.Sleep(5*time.Second - time.Nanosecond)
		r.check(t, 0, time.Second)
		time.Sleep(time.Nanosecond)
		r.check(t, 0, time.Second, time.Hour+time.Second+5*time.Second)
	})
}

func TestLoopWakeBy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := NewLoop()
		defer l.Stop()
		start := time.Now()
		r := &recorder{start: start, next: until(start.Add(time.Second))}
		h := l.Add(r)
		h.WakeBy(start)
		r.check(t, 0)

		// Later than the wake-up already set: it stands.
		time.Sleep(100 * time.Millisecond)
		h.WakeBy(start.Add(2 * time.Second))
		// Earlier: brought forward. The task then asks for its own time
		// again, and the later request is not remembered: the task has run
		// by then, as it asked.
		time.Sleep(100 * time.Millisecond)
		h.WakeBy(start.Add(500 * time.Millisecond))
		time.Sleep(300*time.Millisecond - time.Nanosecond)
		r.check(t, 0)
		time.Sleep(time.Nanosecond)
		r.check(t, 0, 500*time.Millisecond)
		time.Sleep(500 * time.Millisecond)
		r.check(t, 0, 500*time.Millisecond, time.Second)
		time.Sleep(5 * time.Second)
		r.check(t, 0, 500*time.Millisecond, time.Second)

		// A time already past runs the task at once; a zero one changes
		// nothing.
		h.WakeBy(start)
		r.check(t, 0, 500*time.Millisecond, time.Second, time.Since(start))
		h.WakeBy(time.Time{})
		time.Sleep(time.Hour)
		r.check(t, 0, 500*time.Millisecond, time.Second, 6*time.Second)
	})
}

func TestLoopRemove(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := NewLoop()
		defer l.Stop()
		start := time.Now()
		r := &recorder{start: start, next: every(100 * time.Millisecond)}
		h := l.Add(r)
		h.WakeBy(start)
		time.Sleep(250 * time.Millisecond)
		r.check(t, 0, 100*time.Millisecond, 200*time.Millisecond)
		h.Remove()
		time.Sleep(time.Second)
		r.check(t, 0, 100*time.Millisecond, 200*time.Millisecond)
		h.WakeBy(time.Now()) // a removed task stays removed
		time.Sleep(time.Second)
		r.check(t, 0, 100*time.Millisecond, 200*time.Millisecond)

		// A task that removes itself from its Run is not rescheduled by the
		// time that Run returns.
		self := &recorder{start: start}
		var sh *Handle
		self.next = func(now time.Time) time.Time {
			if len(self.runs) == 3 {
				sh.Remove()
			}
			return now.Add(100 * time.Millisecond)
		}
		sh = l.Add(self)
		sh.WakeBy(time.Now())
		time.Sleep(time.Second)
		at := 2250 * time.Millisecond
		self.check(t, at, at+100*time.Millisecond, at+200*time.Millisecond)

		// The other tasks of the loop go on.
		other := &recorder{start: start, next: until(time.Now().Add(time.Second))}
		l.Add(other).WakeBy(time.Now())
		time.Sleep(time.Second)
		other.check(t, 3250*time.Millisecond, 4250*time.Millisecond)
	})
}

func TestLoopStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := NewLoop()
		start := time.Now()
		r := &recorder{start: start, next: every(100 * time.Millisecond)}
		h := l.Add(r)
		h.WakeBy(start)
		time.Sleep(250 * time.Millisecond)
		l.Stop()
		select {
		case <-l.done:
		default:
			t.Fatal("Stop returned before the loop's goroutine ended")
		}
		h.WakeBy(time.Now())
		time.Sleep(time.Second)
		r.check(t, 0, 100*time.Millisecond, 200*time.Millisecond)
		l.Stop() // idempotent
		l.Add(r).WakeBy(time.Now())
		r.check(t, 0, 100*time.Millisecond, 200*time.Millisecond)

		// A task may end its own loop with StopSoon; its Run finishes and
		// nothing runs after it.
		l2 := NewLoop()
		self := &recorder{start: start}
		self.next = func(now time.Time) time.Time {
			if len(self.runs) == 2 {
				l2.StopSoon()
			}
			return now.Add(100 * time.Millisecond)
		}
		l2.Add(self).WakeBy(time.Now())
		time.Sleep(time.Second)
		at := 1250 * time.Millisecond
		self.check(t, at, at+100*time.Millisecond)
		select {
		case <-l2.done:
		default:
			t.Fatal("the loop's goroutine outlived StopSoon")
		}
		l2.Stop()
	})
}

// TestLoopManyTasks: a thousand tasks, each with its own random wake-ups,
// run at exactly those times, and the loop runs them in time order.
func TestLoopManyTasks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := NewLoop()
		defer l.Stop()
		start := time.Now()
		rng := rand.New(rand.NewPCG(1, 2))
		type run struct {
			task int
			at   time.Duration
		}
		var (
			mu  sync.Mutex
			log []run
		)
		const n = 1000
		schedules := make([][]time.Duration, n)
		for i := range schedules {
			k := 1 + rng.IntN(5)
			for range k {
				// Whole milliseconds, so that some tasks share a wake-up.
				schedules[i] = append(schedules[i], time.Duration(rng.IntN(10_000))*time.Millisecond)
			}
			slices.Sort(schedules[i])
			schedules[i] = slices.Compact(schedules[i])
		}
		tasks := make([]*recorder, n)
		for i := range n {
			next := 1
			tasks[i] = &recorder{start: start, next: func(now time.Time) time.Time {
				mu.Lock()
				log = append(log, run{i, now.Sub(start)})
				mu.Unlock()
				if next == len(schedules[i]) {
					return time.Time{}
				}
				next++
				return start.Add(schedules[i][next-1])
			}}
			l.Add(tasks[i]).WakeBy(start.Add(schedules[i][0]))
		}
		time.Sleep(11 * time.Second)
		synctest.Wait()
		for i, task := range tasks {
			task.mu.Lock()
			if !slices.Equal(task.runs, schedules[i]) {
				t.Fatalf("task %d ran at %v, want %v", i, task.runs, schedules[i])
			}
			task.mu.Unlock()
		}
		mu.Lock()
		defer mu.Unlock()
		total := 0
		for _, s := range schedules {
			total += len(s)
		}
		if len(log) != total {
			t.Fatalf("%d runs, want %d", len(log), total)
		}
		for i := 1; i < len(log); i++ {
			if log[i].at < log[i-1].at {
				t.Fatalf("task %d ran at %v after task %d at %v", log[i].task, log[i].at, log[i-1].task, log[i-1].at)
			}
		}
	})
}

// TestLoopConcurrentWakeBy: however many goroutines call WakeBy at once,
// every call is honoured: the task runs between the call and the time it
// named. Run under -race, it also checks the loop's locking.
func TestLoopConcurrentWakeBy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := NewLoop()
		defer l.Stop()
		start := time.Now()
		r := &recorder{start: start}
		h := l.Add(r)
		type request struct{ from, by time.Duration }
		var (
			mu       sync.Mutex
			requests []request
			wg       sync.WaitGroup
		)
		for g := range 16 {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(g), 7))
				for range 50 {
					time.Sleep(time.Duration(rng.IntN(100_000)) * time.Microsecond)
					from := time.Since(start)
					by := from + time.Duration(rng.IntN(50_000))*time.Microsecond
					h.WakeBy(start.Add(by))
					mu.Lock()
					requests = append(requests, request{from, by})
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		time.Sleep(time.Second)
		synctest.Wait()
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, q := range requests {
			i, _ := slices.BinarySearch(r.runs, q.from)
			if i == len(r.runs) || r.runs[i] > q.by {
				t.Fatalf("WakeBy(%v) at %v: no run in between (runs %v)", q.by, q.from, r.runs)
			}
		}
		if len(r.runs) > len(requests) {
			t.Fatalf("%d runs for %d requests", len(r.runs), len(requests))
		}
	})
}
