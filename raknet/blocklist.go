package raknet

import (
	"net/netip"
	"time"
)

// Defaults for the listener's block list.
const (
	// DefaultGarbageStrikes is how many malformed offline messages a
	// source may send before it is blocked.
	DefaultGarbageStrikes = 5
	// DefaultBlockDuration is how long a blocked source stays blocked.
	DefaultBlockDuration = 10 * time.Second
)

// blockList blocks sources that send garbage for a while. It counts
// strikes per source IP (not port, which a sender changes for free) in a
// bounded table and is sans-I/O.
type blockList struct {
	strikes  int
	duration time.Duration
	max      int
	entries  map[netip.Addr]*blockEntry
}

type blockEntry struct {
	strikes int
	since   time.Time // first strike of the current count
	until   time.Time // blocked until, if after now
}

func newBlockList(strikes int, duration time.Duration, maxSources int) *blockList {
	return &blockList{strikes: strikes, duration: duration, max: maxSources, entries: make(map[netip.Addr]*blockEntry)}
}

// blocked reports whether src is blocked at now.
func (l *blockList) blocked(src netip.Addr, now time.Time) bool {
	e := l.entries[src]
	return e != nil && now.Before(e.until)
}

// strike records garbage from src and reports whether src is now
// blocked. Strikes older than the block duration are forgotten.
func (l *blockList) strike(src netip.Addr, now time.Time) bool {
	e := l.entries[src]
	if e == nil {
		if len(l.entries) >= l.max {
			l.expire(now)
			if len(l.entries) >= l.max {
				// Full of active offenders: the newcomer is not tracked,
				// its garbage is still dropped.
				return false
			}
		}
		e = &blockEntry{since: now}
		l.entries[src] = e
	}
	if now.Sub(e.since) > l.duration {
		e.strikes, e.since = 0, now
	}
	e.strikes++
	if e.strikes >= l.strikes {
		e.until = now.Add(l.duration)
		e.strikes, e.since = 0, now
		return true
	}
	return false
}

// expire forgets entries that are neither blocked nor recently struck.
func (l *blockList) expire(now time.Time) {
	for src, e := range l.entries {
		if !now.Before(e.until) && now.Sub(e.since) > l.duration {
			delete(l.entries, src)
		}
	}
}
