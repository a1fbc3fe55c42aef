// SPDX-License-Identifier: Apache-2.0

package rawcuda

import "testing"

// BenchmarkCgoNoop is the cost of one cgo call: compare the per-call costs of the slimcuda
// benchmarks (go/slimcuda/buffer_test.go) with it.
func BenchmarkCgoNoop(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if Noop() != 0 {
			b.Fatal("noop returned non-zero")
		}
	}
}

func TestNoop(t *testing.T) {
	if got := Noop(); got != 0 {
		t.Fatalf("Noop() = %d, want 0", got)
	}
}
