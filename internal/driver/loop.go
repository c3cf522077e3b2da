package driver

import (
	"container/heap"
	"sync"
	"time"
)

// Task is a sans-I/O core, or a connection built on one, that a Loop
// drives. Run runs its timers at now and returns when it next needs to
// run; the zero time means only input or an API call can change anything.
// Run is called from the loop's goroutine; the task does its own locking.
type Task interface {
	Run(now time.Time) time.Time
}

// Loop runs the timers of many tasks on one goroutine. Each task has at
// most one wake-up time; the loop sleeps until the earliest, runs every
// task that is due, and schedules each again at the time its Run returns.
// Anything else that changes a task's timers (a received datagram, a Send)
// calls WakeBy on the task's Handle. The zero Loop is not usable; call
// NewLoop.
type Loop struct {
	mu      sync.Mutex
	queue   wakeQueue
	target  time.Time // when the goroutine is set to wake; zero: not sleeping on a timer
	stopped bool

	wake chan struct{}
	stop chan struct{}
	done chan struct{}
	due  []*Handle // the goroutine's scratch
}

// Handle is a task's place in a Loop.
type Handle struct {
	loop  *Loop
	task  Task
	at    time.Time // zero: not queued
	index int       // in loop.queue while queued
	gone  bool
}

// NewLoop starts a loop's goroutine. Stop ends it.
func NewLoop() *Loop {
	l := &Loop{wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go l.run()
	return l
}

// Add registers t, not yet scheduled: the caller keeps the Handle where
// t's Run can see it, then calls WakeBy (with time.Now() to let t compute
// its first wake-up itself).
func (l *Loop) Add(t Task) *Handle {
	return &Handle{loop: l, task: t, index: -1}
}

// WakeBy makes the loop run the task no later than t: an earlier time
// already scheduled stands, a later one is brought forward. A zero t
// changes nothing. Running a task early is harmless, since Run only does
// what is due, so callers need not know what the task scheduled before.
func (h *Handle) WakeBy(t time.Time) {
	if t.IsZero() {
		return
	}
	l := h.loop
	l.mu.Lock()
	if h.gone || l.stopped {
		l.mu.Unlock()
		return
	}
	switch {
	case h.at.IsZero():
		h.at = t
		heap.Push(&l.queue, h)
	case t.Before(h.at):
		h.at = t
		heap.Fix(&l.queue, h.index)
	default:
		l.mu.Unlock()
		return
	}
	poke := l.target.IsZero() || t.Before(l.target)
	l.mu.Unlock()
	if poke {
		Poke(l.wake)
	}
}

// Remove takes the task out of the loop; it is not run again. A Run in
// progress on the loop's goroutine finishes.
func (h *Handle) Remove() {
	l := h.loop
	l.mu.Lock()
	h.gone = true
	if !h.at.IsZero() {
		heap.Remove(&l.queue, h.index)
		h.at = time.Time{}
	}
	l.mu.Unlock()
}

// Stop ends the loop's goroutine and waits for it; tasks are not run
// again. It is idempotent. A task must not call it (StopSoon).
func (l *Loop) Stop() {
	l.StopSoon()
	<-l.done
}

// StopSoon ends the loop's goroutine once the task running now, if any,
// returns, without waiting for that: a task may call it, as a connection
// with a loop of its own does when it ends. It is idempotent.
func (l *Loop) StopSoon() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.stopped {
		l.stopped = true
		close(l.stop)
	}
}

func (l *Loop) run() {
	defer close(l.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-l.stop:
			return
		default:
		}
		now := time.Now()
		l.mu.Lock()
		l.due = l.due[:0]
		for len(l.queue) > 0 && !l.queue[0].at.After(now) {
			h := heap.Pop(&l.queue).(*Handle)
			h.at = time.Time{}
			l.due = append(l.due, h)
		}
		l.mu.Unlock()
		for i, h := range l.due {
			h.WakeBy(h.task.Run(now))
			l.due[i] = nil
		}
		l.mu.Lock()
		var sleep time.Duration
		l.target = time.Time{}
		if len(l.queue) > 0 {
			l.target = l.queue[0].at
			sleep = time.Until(l.target)
		}
		l.mu.Unlock()
		if !l.target.IsZero() {
			if sleep <= 0 {
				continue
			}
			timer.Reset(sleep)
		}
		select {
		case <-timer.C:
		case <-l.wake:
		case <-l.stop:
			timer.Stop()
			return
		}
		timer.Stop()
	}
}

// wakeQueue is a min-heap of handles by wake-up time.
type wakeQueue []*Handle

func (q wakeQueue) Len() int           { return len(q) }
func (q wakeQueue) Less(i, j int) bool { return q[i].at.Before(q[j].at) }
func (q wakeQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index = i
	q[j].index = j
}
func (q *wakeQueue) Push(x any) {
	h := x.(*Handle)
	h.index = len(*q)
	*q = append(*q, h)
}
func (q *wakeQueue) Pop() any {
	old := *q
	h := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	h.index = -1
	return h
}
