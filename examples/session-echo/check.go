package main

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"io"

	"github.com/netrak/netrak/reliability"
	"github.com/netrak/netrak/session"
)

// checker matches echoes with the messages sent. Reliable-ordered echoes
// must come in the order their messages went out on each channel, so the
// k'th echo on a channel is compared with the k'th message sent there.
// Other echoes may come in any order and are looked up by content: a
// message of a few bytes holds no index, and two of them may be the same.
type checker struct {
	count      int
	reliable   int // reliable messages among the count
	unreliable int
	sequenced  int // unreliable-sequenced messages among the unreliable
	log        io.Writer

	ordered [orderedChannels][]int // indexes sent on each channel, in order
	next    [orderedChannels]int   // how many echoes each channel has had
	seed    maphash.Seed
	pending map[uint64][]int // reliable (unordered) messages by content hash
	unrel   map[uint64][]int // unreliable messages by content hash

	arrivals   int // reliable echoes, good or not
	passed     int // reliable messages whose echo checked out
	unexpected int // reliable echoes that match nothing sent

	unreliableBack, sequencedBack int
	lastSequenced                 int // index of the latest sequenced echo
	backwards                     int // sequenced echoes older than one before
	malformed                     int // unreliable echoes that match nothing sent
}

func newChecker(count int, log io.Writer) *checker {
	ck := &checker{
		count: count, log: log, seed: maphash.MakeSeed(), lastSequenced: -1,
		pending: map[uint64][]int{}, unrel: map[uint64][]int{},
	}
	for i := range count {
		k := kindOf(i)
		switch k.rel {
		case reliability.ReliableOrdered:
			ck.reliable++
			ck.ordered[k.channel] = append(ck.ordered[k.channel], i)
		case reliability.Reliable:
			ck.reliable++
			h := ck.hash(message(i))
			ck.pending[h] = append(ck.pending[h], i)
		default:
			ck.unreliable++
			if k.rel == reliability.UnreliableSequenced {
				ck.sequenced++
			}
			h := ck.hash(message(i))
			ck.unrel[h] = append(ck.unrel[h], i)
		}
	}
	return ck
}

func (ck *checker) hash(b []byte) uint64 { return maphash.Bytes(ck.seed, b) }

// take removes from set a message equal to b and of kind k, and returns
// its index, or -1 if there is none.
func (ck *checker) take(set map[uint64][]int, b []byte, k kind) int {
	h := ck.hash(b)
	list := set[h]
	for j, i := range list {
		if kindOf(i) == k && bytes.Equal(message(i), b) {
			list = append(list[:j], list[j+1:]...)
			if len(list) == 0 {
				delete(set, h)
			} else {
				set[h] = list
			}
			return i
		}
	}
	return -1
}

// check accounts for one echo.
func (ck *checker) check(m session.Message) {
	switch m.Reliability {
	case reliability.ReliableOrdered:
		ck.arrivals++
		c := int(m.Channel)
		if c >= orderedChannels || ck.next[c] == len(ck.ordered[c]) {
			ck.unexpected++
			fmt.Fprintf(ck.log, "session-echo: unexpected reliable-ordered echo on channel %d (%d bytes)\n", c, len(m.Data))
			return
		}
		i := ck.ordered[c][ck.next[c]]
		ck.next[c]++
		if want := message(i); bytes.Equal(m.Data, want) {
			ck.passed++
		} else {
			fmt.Fprintf(ck.log, "session-echo: echo %d on channel %d is not message %d: %s\n", ck.next[c], c, i, difference(m.Data, want))
		}
	case reliability.Reliable:
		ck.arrivals++
		if ck.take(ck.pending, m.Data, kind{m.Reliability, 0}) >= 0 {
			ck.passed++
		} else {
			ck.unexpected++
			fmt.Fprintf(ck.log, "session-echo: reliable echo of %d bytes %s matches no message sent, or came twice\n", len(m.Data), describe(m.Data))
		}
	case reliability.Unreliable, reliability.UnreliableSequenced:
		k := kind{m.Reliability, 0}
		if k.rel == reliability.UnreliableSequenced {
			k.channel = m.Channel
		}
		i := ck.take(ck.unrel, m.Data, k)
		if i < 0 {
			ck.malformed++
			fmt.Fprintf(ck.log, "session-echo: %v echo of %d bytes %s on channel %d matches no message sent, or came twice\n",
				m.Reliability, len(m.Data), describe(m.Data), m.Channel)
			return
		}
		ck.unreliableBack++
		if k.rel == reliability.UnreliableSequenced {
			ck.sequencedBack++
			if i < ck.lastSequenced {
				ck.backwards++
				fmt.Fprintf(ck.log, "session-echo: sequenced echo of message %d after message %d\n", i, ck.lastSequenced)
			}
			ck.lastSequenced = max(ck.lastSequenced, i)
		}
	default:
		// Nothing was sent with another kind, and an echo keeps its kind.
		ck.arrivals++
		ck.unexpected++
		fmt.Fprintf(ck.log, "session-echo: echo of %d bytes arrived %v, a kind never sent\n", len(m.Data), m.Reliability)
	}
}

// unreliableLine is the informational line about unreliable echoes.
func (ck *checker) unreliableLine() string {
	s := fmt.Sprintf("unreliable: %d of %d echoes came back (%d of %d sequenced, ", ck.unreliableBack, ck.unreliable, ck.sequencedBack, ck.sequenced)
	if ck.backwards == 0 {
		s += "never backwards)"
	} else {
		s += fmt.Sprintf("%d backwards)", ck.backwards)
	}
	if ck.malformed > 0 {
		s += fmt.Sprintf(", %d matching nothing sent", ck.malformed)
	}
	return s
}

// describe names a message by its first bytes, for error messages.
func describe(b []byte) string {
	if len(b) > 8 {
		return fmt.Sprintf("[% x ...]", b[:8])
	}
	return fmt.Sprintf("[% x]", b)
}

// difference says how got differs from want.
func difference(got, want []byte) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d bytes %s, want %d bytes %s", len(got), describe(got), len(want), describe(want))
	}
	for k := range got {
		if got[k] != want[k] {
			return fmt.Sprintf("byte %d of %d is %#02x, want %#02x", k, len(got), got[k], want[k])
		}
	}
	return "equal"
}
