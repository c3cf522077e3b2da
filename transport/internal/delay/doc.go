// Package delay holds datagrams until their delivery time and hands them
// over in (time, arrival) order. The simulated network and the impairment
// relay both schedule deliveries through it.
//
// It keeps one timer for the whole queue, armed for the earliest item, so
// that items due at the same instant are delivered in the order they were
// scheduled (one timer per item would fire in whatever order the scheduler
// picks). Timers come from package time, so under testing/synctest the queue
// runs on the fake clock.
package delay
