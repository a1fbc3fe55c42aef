package slimcuda

import (
	"fmt"
	"testing"

	"github.com/slimcuda/slimcuda/go/internal/rawcuda"
)

// Benchmarks (run on the GPU machine by tools/gpu/run.sh --bench): copies through slimcuda
// against raw CUDA called from Go in the same run, on pinned host memory, and the cost of
// one cgo call.

func BenchmarkCgoNoop(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if err := noop(); err != nil {
			b.Fatal(err)
		}
	}
}

var benchSizes = []int{4, 4 << 10, 1 << 20, 64 << 20}

func sizeName(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

func BenchmarkCopy(b *testing.B) {
	requireGPU(b)
	host, err := rawcuda.HostAlloc(64 << 20)
	if err != nil {
		b.Fatal(err)
	}
	defer rawcuda.HostFree(host)
	buf, err := Alloc(64<<20, OnDevice(0))
	if err != nil {
		b.Fatal(err)
	}
	defer buf.Close()
	stream, err := NewStream(NonBlocking())
	if err != nil {
		b.Fatal(err)
	}
	defer stream.Close()
	dev := buf.Pointer()

	type variant struct {
		name string
		h2d  func(src []byte) error
		d2h  func(dst []byte) error
	}
	variants := []variant{
		{"raw=cudaMemcpy", func(s []byte) error { return rawcuda.CopyToDevice(dev, s) },
			func(d []byte) error { return rawcuda.CopyToHost(d, dev) }},
		{"slimcuda=no-stream", func(s []byte) error { return buf.CopyFromHost(s) },
			func(d []byte) error { return buf.CopyToHost(d) }},
		{"raw=async+sync", func(s []byte) error { return rawcuda.CopyToDeviceAsyncSync(dev, s, stream.Handle()) },
			func(d []byte) error { return rawcuda.CopyToHostAsyncSync(d, dev, stream.Handle()) }},
		{"slimcuda=OnStream", func(s []byte) error { return buf.CopyFromHost(s, OnStream(stream)) },
			func(d []byte) error { return buf.CopyToHost(d, OnStream(stream)) }},
	}
	for _, n := range benchSizes {
		for _, dir := range []string{"H2D", "D2H"} {
			for _, v := range variants {
				b.Run(fmt.Sprintf("%s/%s/%s", sizeName(n), dir, v.name), func(b *testing.B) {
					b.SetBytes(int64(n))
					op := v.h2d
					if dir == "D2H" {
						op = v.d2h
					}
					for i := 0; i < b.N; i++ {
						if err := op(host[:n]); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}
