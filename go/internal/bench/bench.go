// SPDX-License-Identifier: Apache-2.0

// Package bench times slimcuda against the raw CUDA runtime side by side in one process,
// from Go: what the `slimcuda bench` command prints. (The benchmarks of record are the
// C++ binaries in bench/ and the Go benchmarks in go/slimcuda; docs/benchmarks.md.)
package bench

import (
	"errors"
	"sort"
	"time"
	"unsafe"

	"github.com/slimcuda/slimcuda/go/internal/rawcuda"
	"github.com/slimcuda/slimcuda/go/slimcuda"
)

// rounds alternate raw and slimcuda, so drift hits both; the median round counts.
const rounds = 7

// Measurement is slimcuda's time per operation next to the raw CUDA runtime's.
type Measurement struct {
	RawMicros, SlimcudaMicros float64
}

// Ratio is raw time / slimcuda time: 1.0 means the same speed.
func (m Measurement) Ratio() float64 { return m.RawMicros / m.SlimcudaMicros }

func perCall(iterations int, op func() error) (float64, error) {
	t0 := time.Now()
	for i := 0; i < iterations; i++ {
		if err := op(); err != nil {
			return 0, err
		}
	}
	return float64(time.Since(t0).Microseconds()) / float64(iterations), nil
}

func median(v []float64) float64 {
	sort.Float64s(v)
	return v[len(v)/2]
}

func compare(iterations int, raw, slim func() error) (Measurement, error) {
	if err := raw(); err != nil { // warm both paths once
		return Measurement{}, err
	}
	if err := slim(); err != nil {
		return Measurement{}, err
	}
	var r, s []float64
	for k := 0; k < rounds; k++ {
		rt, err := perCall(iterations, raw)
		if err != nil {
			return Measurement{}, err
		}
		st, err := perCall(iterations, slim)
		if err != nil {
			return Measurement{}, err
		}
		r, s = append(r, rt), append(s, st)
	}
	return Measurement{RawMicros: median(r), SlimcudaMicros: median(s)}, nil
}

// Copy times blocking copies of nbytes between pinned host memory and device memory
// (toDevice: host to device) on device 0: slimcuda's DeviceBuffer copies against
// cudaMemcpy, or, withStream, both on one non-blocking stream (cudaMemcpyAsync +
// cudaStreamSynchronize for the raw side).
func Copy(nbytes int, toDevice, withStream bool, iterations int) (Measurement, error) {
	if nbytes <= 0 || iterations <= 0 {
		return Measurement{}, errors.New("bench: nbytes and iterations must be positive")
	}
	host, err := rawcuda.HostAlloc(nbytes)
	if err != nil {
		return Measurement{}, err
	}
	defer rawcuda.HostFree(host)
	raw, err := rawcuda.Malloc(nbytes)
	if err != nil {
		return Measurement{}, err
	}
	defer rawcuda.Free(raw)
	buf, err := slimcuda.Alloc(nbytes, slimcuda.OnDevice(slimcuda.CUDADevice(0)))
	if err != nil {
		return Measurement{}, err
	}
	defer buf.Close()
	var opts []slimcuda.CallOption
	var stream unsafe.Pointer
	if withStream {
		s, err := slimcuda.NewStream(slimcuda.NonBlocking(), slimcuda.StreamOnDevice(slimcuda.CUDADevice(0)))
		if err != nil {
			return Measurement{}, err
		}
		defer s.Close()
		opts, stream = append(opts, slimcuda.OnStream(s)), s.Handle()
	}
	rawOp := func() error {
		switch {
		case toDevice && withStream:
			return rawcuda.CopyToDeviceAsyncSync(raw, host, stream)
		case toDevice:
			return rawcuda.CopyToDevice(raw, host)
		case withStream:
			return rawcuda.CopyToHostAsyncSync(host, raw, stream)
		default:
			return rawcuda.CopyToHost(host, raw)
		}
	}
	slimOp := func() error {
		if toDevice {
			return buf.CopyFromHost(host, opts...)
		}
		return buf.CopyToHost(host, opts...)
	}
	return compare(iterations, rawOp, slimOp)
}

// Alloc times a device allocation and free of nbytes: slimcuda's (cached) against
// cudaMalloc + cudaFree.
func Alloc(nbytes, iterations int) (Measurement, error) {
	if nbytes <= 0 || iterations <= 0 {
		return Measurement{}, errors.New("bench: nbytes and iterations must be positive")
	}
	rawOp := func() error {
		p, err := rawcuda.Malloc(nbytes)
		if err != nil {
			return err
		}
		return rawcuda.Free(p)
	}
	slimOp := func() error {
		b, err := slimcuda.Alloc(nbytes, slimcuda.OnDevice(slimcuda.CUDADevice(0)))
		if err != nil {
			return err // "slimcuda: Alloc: ...", as it is
		}
		return b.Close()
	}
	return compare(iterations, rawOp, slimOp)
}
