package main

import (
	"context"
	"fmt"
	"io"
)

// Example runs the demo and reports whether pings got answered through the
// impaired path.
func Example() {
	res, err := demo(context.Background(), io.Discard)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("pings sent through the relay:", res.relay.Up.Sent)
	fmt.Println("some answered, some lost:", res.uniquePongs > 0 && res.uniquePongs < pings)
	// Output:
	// pings sent through the relay: 200
	// some answered, some lost: true
}
