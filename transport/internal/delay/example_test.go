package delay_test

import (
	"fmt"
	"time"

	"github.com/netrak/netrak/transport/internal/delay"
)

func ExampleQueue() {
	done := make(chan struct{})
	q := delay.New(0, func(s string) {
		fmt.Println(s)
		if s == "last" {
			close(done)
		}
	}, nil)
	now := time.Now()
	q.Schedule(now.Add(20*time.Millisecond), "last")
	q.Schedule(now.Add(10*time.Millisecond), "second")
	q.Schedule(now, "first") // already due: delivered before Schedule returns
	<-done
	// Output:
	// first
	// second
	// last
}
