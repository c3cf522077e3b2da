package delay

import (
	"sync"
	"time"
)

// DefaultLimit is the number of items a Queue holds when New gets limit 0.
const DefaultLimit = 1 << 16

// Queue is a time-ordered queue of items of type T. It is safe for
// concurrent use.
type Queue[T any] struct {
	deliver func(T)
	discard func(T)
	limit   int

	mu     sync.Mutex
	items  []entry[T] // binary min-heap on (at, seq)
	seq    uint64
	timer  *time.Timer
	closed bool
}

type entry[T any] struct {
	at  time.Time
	seq uint64
	v   T
}

// New returns a queue that calls deliver for each item when it is due, with
// the queue's lock held: deliver must not call back into the queue. discard
// is called for items the queue gives up on at Close; it may be nil. The
// queue holds at most limit items (DefaultLimit if 0).
func New[T any](limit int, deliver, discard func(T)) *Queue[T] {
	if limit <= 0 {
		limit = DefaultLimit
	}
	return &Queue[T]{deliver: deliver, discard: discard, limit: limit}
}

// Schedule queues v for delivery at at. An item already due is delivered
// before Schedule returns, after any earlier items still waiting, so
// zero-delay traffic costs no timer. Schedule reports false, without
// keeping v, if the queue is full or closed.
func (q *Queue[T]) Schedule(at time.Time, v T) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	now := time.Now()
	if !at.After(now) {
		q.deliverDue(now)
		if len(q.items) == 0 || q.items[0].at.After(now) {
			q.deliver(v)
			return true
		}
	}
	if len(q.items) >= q.limit {
		return false
	}
	q.seq++
	q.push(entry[T]{at: at, seq: q.seq, v: v})
	if q.items[0].seq == q.seq {
		q.arm(now)
	}
	return true
}

// Len returns the number of items waiting.
func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

// Close discards every waiting item and makes Schedule fail. When it
// returns, no delivery is in progress.
func (q *Queue[T]) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	q.closed = true
	if q.timer != nil {
		q.timer.Stop()
	}
	for _, e := range q.items {
		if q.discard != nil {
			q.discard(e.v)
		}
	}
	clear(q.items)
	q.items = nil
}

func (q *Queue[T]) fire() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	now := time.Now()
	q.deliverDue(now)
	if len(q.items) > 0 {
		q.arm(now)
	}
}

// arm sets the timer for the earliest item. Callers hold q.mu.
func (q *Queue[T]) arm(now time.Time) {
	d := q.items[0].at.Sub(now)
	if q.timer == nil {
		q.timer = time.AfterFunc(d, q.fire)
		return
	}
	q.timer.Reset(d)
}

// deliverDue hands over every item due at now. Callers hold q.mu.
func (q *Queue[T]) deliverDue(now time.Time) {
	for len(q.items) > 0 && !q.items[0].at.After(now) {
		q.deliver(q.pop().v)
	}
}

func (q *Queue[T]) less(i, j int) bool {
	a, b := &q.items[i], &q.items[j]
	if a.at.Equal(b.at) {
		return a.seq < b.seq
	}
	return a.at.Before(b.at)
}

func (q *Queue[T]) push(e entry[T]) {
	q.items = append(q.items, e)
	i := len(q.items) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !q.less(i, parent) {
			break
		}
		q.items[i], q.items[parent] = q.items[parent], q.items[i]
		i = parent
	}
}

func (q *Queue[T]) pop() entry[T] {
	top := q.items[0]
	last := len(q.items) - 1
	q.items[0] = q.items[last]
	var zero entry[T]
	q.items[last] = zero
	q.items = q.items[:last]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < last && q.less(l, m) {
			m = l
		}
		if r < last && q.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		q.items[i], q.items[m] = q.items[m], q.items[i]
		i = m
	}
	return top
}
