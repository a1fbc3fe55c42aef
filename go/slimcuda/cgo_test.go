package slimcuda

import (
	"testing"
)

// BenchmarkCgoNoop is the cost of one cgo call (part of the benchmarks in buffer_test.go).
func BenchmarkCgoNoop(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if err := noop(); err != nil {
			b.Fatal(err)
		}
	}
}
