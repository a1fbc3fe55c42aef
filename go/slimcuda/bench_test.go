package slimcuda

import (
	"fmt"
	"testing"

	"github.com/slimcuda/slimcuda/go/internal/rawcuda"
)

// Benchmarks (run on the GPU machine by tools/gpu/perf.sh and run.sh --bench), each against
// raw CUDA called from Go in the same run: copies from pinned host memory, copies from
// ordinary Go slices (pageable: slimcuda stages them), device and pinned allocation on a
// cache hit, and the cost of one cgo call.

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

// Copies between a Go slice (ordinary pageable memory) and the GPU: raw cudaMemcpy against
// slimcuda, which stages copies from 1 MiB through pinned chunks.
func BenchmarkPageableCopy(b *testing.B) {
	requireGPU(b)
	const most = 256 << 20
	host := make([]byte, most)
	for i := range host {
		host[i] = byte(i) // touch every page before timing
	}
	buf, err := Alloc(most, OnDevice(0))
	if err != nil {
		b.Fatal(err)
	}
	defer buf.Close()
	dev := buf.Pointer()
	for _, n := range []int{1 << 20, 16 << 20, 64 << 20, most} {
		for _, dir := range []string{"H2D", "D2H"} {
			ops := []struct {
				name string
				op   func(h []byte) error
			}{
				{"raw=cudaMemcpy", func(h []byte) error {
					if dir == "H2D" {
						return rawcuda.CopyToDevice(dev, h)
					}
					return rawcuda.CopyToHost(h, dev)
				}},
				{"slimcuda", func(h []byte) error {
					if dir == "H2D" {
						return buf.CopyFromHost(h)
					}
					return buf.CopyToHost(h)
				}},
			}
			for _, v := range ops {
				b.Run(fmt.Sprintf("%s/%s/%s", sizeName(n), dir, v.name), func(b *testing.B) {
					b.SetBytes(int64(n))
					for i := 0; i < b.N; i++ {
						if err := v.op(host[:n]); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// Device allocation + free on a cache hit against cudaMalloc and cudaMallocAsync pairs,
// and a pinned tensor + Close against cudaHostAlloc + cudaFreeHost, two cgo calls each.
func BenchmarkAllocFree(b *testing.B) {
	requireGPU(b)
	stream, err := NewStream(NonBlocking())
	if err != nil {
		b.Fatal(err)
	}
	defer stream.Close()
	for _, n := range []int{4 << 10, 1 << 20, 64 << 20} {
		variants := []struct {
			name string
			op   func() error
		}{
			{"device/slimcuda", func() error {
				buf, err := Alloc(n, OnDevice(0))
				if err != nil {
					return err
				}
				return buf.Close()
			}},
			{"device/raw=cudaMalloc", func() error {
				p, err := rawcuda.Malloc(n)
				if err != nil {
					return err
				}
				return rawcuda.Free(p)
			}},
			{"device/raw=cudaMallocAsync", func() error {
				p, err := rawcuda.MallocAsync(n, stream.Handle())
				if err != nil {
					return err
				}
				return rawcuda.FreeAsync(p, stream.Handle())
			}},
			{"pinned/slimcuda-tensor", func() error {
				t, err := NewTensor([]int64{int64(n)}, Uint8, Device{Type: CPU}, Pinned())
				if err != nil {
					return err
				}
				return t.Close()
			}},
			{"pinned/raw=cudaHostAlloc", func() error {
				h, err := rawcuda.HostAlloc(n)
				if err != nil {
					return err
				}
				return rawcuda.HostFree(h)
			}},
		}
		for _, v := range variants {
			b.Run(fmt.Sprintf("%s/%s", sizeName(n), v.name), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if err := v.op(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
	if err := stream.Synchronize(); err != nil {
		b.Fatal(err)
	}
}
