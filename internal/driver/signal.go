package driver

// Poke wakes one waiter on a channel of capacity 1 without blocking: the
// waiter sees at most one pending signal however many were sent, and
// re-checks the state it waits on.
func Poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
