package main

import "fmt"

// Example shows part 2's message plan: sizes that fit one datagram, and
// every tenth and hundredth message large enough to be split.
func Example() {
	for _, i := range []int{0, 1, 2, 3, 9, 99} {
		m := message(i)
		fmt.Printf("message %d: %d bytes, starting % x\n", i, len(m), m[:5])
	}
	// Output:
	// message 0: 5 bytes, starting 86 00 00 00 00
	// message 1: 100 bytes, starting 86 01 00 00 00
	// message 2: 576 bytes, starting 86 02 00 00 00
	// message 3: 1400 bytes, starting 86 03 00 00 00
	// message 9: 5000 bytes, starting 86 09 00 00 00
	// message 99: 70000 bytes, starting 86 63 00 00 00
}
