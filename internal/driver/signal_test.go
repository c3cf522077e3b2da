package driver

import "testing"

// TestPoke: pokes never block, and however many come before the waiter
// looks, it sees one.
func TestPoke(t *testing.T) {
	ch := make(chan struct{}, 1)
	for range 3 {
		Poke(ch)
	}
	select {
	case <-ch:
	default:
		t.Fatal("no signal pending after Poke")
	}
	select {
	case <-ch:
		t.Fatal("three pokes left more than one signal")
	default:
	}
}
