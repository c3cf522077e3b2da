package refdemo_test

import (
	"fmt"

	"github.com/netrak/netrak/examples/internal/refdemo"
)

func Example() {
	p := append([]byte(nil), refdemo.Payload...)
	fmt.Println(len(p), p[0], p[255], p[256], refdemo.Matches(p))
	p[7]++
	fmt.Println(refdemo.Matches(p), refdemo.Matches(p[:100]))
	// Output:
	// 1200 0 255 0 true
	// false false
}
