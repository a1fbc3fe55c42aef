// SPDX-License-Identifier: Apache-2.0

package slimcuda

import (
	"bytes"
	"fmt"
	"math"
	"testing"
	"time"
	"unsafe"

	"github.com/slimcuda/slimcuda/go/internal/fixture"
	"github.com/slimcuda/slimcuda/go/internal/rawcuda"
	"github.com/slimcuda/slimcuda/go/internal/testkernel"
	"github.com/stretchr/testify/require"
)

// The CUDA allocator and copy contract from testdata/allocator.json (csrc/c_api/
// allocator_test.cc runs the same cases).

// deviceIndex reads "device_index": a number, or "count" (first index past the last device).
func deviceIndex(t *testing.T, c fixture.Case) int {
	if !c.Has("device_index") {
		return 0
	}
	var v any
	c.Get(t, "device_index", &v)
	switch x := v.(type) {
	case float64:
		return int(x)
	case string:
		require.Equal(t, "count", x)
		n, err := DeviceCount()
		require.NoError(t, err)
		return n
	}
	t.Fatalf("bad device_index %v", v)
	return 0
}

// caseStream returns the call option selecting the case's stream (none: no option) and a
// cleanup. Copies use OnStream, the per-call form of selection.
func caseStream(t *testing.T, kind string) ([]CallOption, func()) {
	switch kind {
	case "", "none":
		return nil, func() {}
	case "default":
		return []CallOption{OnStream(DefaultStream())}, func() {}
	}
	var opts []StreamOption
	if kind == "non_blocking" {
		opts = append(opts, NonBlocking())
	}
	s, err := NewStream(opts...)
	require.NoError(t, err)
	return []CallOption{OnStream(s)}, func() { require.NoError(t, s.Close()) }
}

func pattern(n, seed int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*131 + seed)
	}
	return b
}

func TestAllocatorCopyContract(t *testing.T) {
	for _, c := range fx.Cases(t, "allocator.json", "copy") {
		t.Run(c.Name, func(t *testing.T) {
			fx.Begin(t, c)
			var nbytes int
			var direction, dst, src, stream string
			c.Get(t, "nbytes", &nbytes)
			c.Get(t, "direction", &direction)
			c.Get(t, "dst", &dst)
			c.Get(t, "src", &src)
			c.GetOr(t, "stream", &stream)
			index := deviceIndex(t, c)

			host := make([]byte, nbytes+16)
			// The "device" side of the copy is a DeviceBuffer value pointing at what the case
			// names, so the C ABI sees exactly the case's pointers and index.
			var dev DeviceBuffer
			dev.size, dev.device = nbytes+16, index
			var hostSide []byte
			deviceKind, hostKind := dst, src
			if direction == "d2h" {
				deviceKind, hostKind = src, dst
			}
			switch deviceKind {
			case "device":
				b, err := Alloc(nbytes+16, OnDevice(CUDADevice(0)))
				require.NoError(t, err)
				defer b.Close()
				dev.ptr = b.ptr
			case "host":
				dev.ptr = unsafe.Pointer(&host[0])
			case "null":
			}
			switch hostKind {
			case "host":
				hostSide = host[:nbytes]
			case "null":
				hostSide = nil
			}
			opts, done := caseStream(t, stream)
			defer done()
			var err error
			if hostSide == nil {
				// A null host pointer cannot come from a Go slice; reach the C ABI directly.
				err = copyRaw(&dev, nil, nbytes, direction == "h2d", opts)
			} else if direction == "h2d" {
				err = copyRaw(&dev, unsafe.Pointer(unsafe.SliceData(hostSide)), nbytes, true, opts)
			} else {
				err = copyRaw(&dev, unsafe.Pointer(unsafe.SliceData(hostSide)), nbytes, false, opts)
			}
			expectCode(t, c, err)
		})
	}
}

func TestAllocatorRoundTrip(t *testing.T) {
	for _, c := range fx.Cases(t, "allocator.json", "round_trip") {
		t.Run(c.Name, func(t *testing.T) {
			fx.Begin(t, c)
			var nbytes int
			var stream string
			c.Get(t, "nbytes", &nbytes)
			c.Get(t, "stream", &stream)
			buf, err := Alloc(nbytes, OnDevice(CUDADevice(deviceIndex(t, c))))
			require.NoError(t, err)
			defer func() { require.NoError(t, buf.Close()) }()
			in, out := pattern(nbytes, 7), make([]byte, nbytes)
			opts, done := caseStream(t, stream)
			defer done()
			require.NoError(t, buf.CopyFromHost(in, opts...))
			require.NoError(t, buf.CopyToHost(out, opts...))
			require.True(t, bytes.Equal(in, out), "round trip changed the data")
		})
	}
}

func TestAllocatorAlloc(t *testing.T) {
	for _, c := range fx.Cases(t, "allocator.json", "alloc") {
		t.Run(c.Name, func(t *testing.T) {
			fx.Begin(t, c)
			var nbytes float64 // may exceed int on purpose; checked below
			var alignment int
			c.Get(t, "nbytes", &nbytes)
			c.Get(t, "alignment", &alignment)
			require.Less(t, nbytes, float64(math.MaxInt))
			buf, err := Alloc(int(nbytes), OnDevice(CUDADevice(deviceIndex(t, c))), Aligned(alignment))
			expectCode(t, c, err)
			if err != nil {
				require.Nil(t, buf)
				return
			}
			defer func() { require.NoError(t, buf.Close()) }()
			var null bool
			if c.GetOr(t, "null", &null) && null {
				require.Nil(t, buf.Pointer())
				return
			}
			var alignedTo int
			c.Get(t, "aligned_to", &alignedTo)
			require.Zero(t, uintptr(buf.Pointer())%uintptr(alignedTo))
			in, out := pattern(int(nbytes), 3), make([]byte, int(nbytes))
			require.NoError(t, buf.CopyFromHost(in))
			require.NoError(t, buf.CopyToHost(out))
			require.True(t, bytes.Equal(in, out))
		})
	}
}

// See the C++ twin: the D2H copy made under a non-blocking caller stream must wait for
// the kernel already enqueued there.
func TestAllocatorDeviceToHostOrderedOnCallerStream(t *testing.T) {
	for _, c := range fx.Cases(t, "allocator.json", "ordering_d2h") {
		t.Run(c.Name, func(t *testing.T) {
			fx.Begin(t, c)
			var n, spinUS int
			var value float32
			c.Get(t, "n", &n)
			c.Get(t, "spin_us", &spinUS)
			c.Get(t, "value", &value)
			testkernel.Require(t)
			buf, err := Alloc(4*n, OnDevice(CUDADevice(0)))
			require.NoError(t, err)
			defer buf.Close()
			require.NoError(t, buf.FillFloat32(0, n))
			require.NoError(t, DefaultStream().Synchronize())
			s, err := NewStream(NonBlocking())
			require.NoError(t, err)
			defer s.Close()
			out := make([]float32, n)
			require.NoError(t, WithCallerStream(s, func() error {
				if err := testkernel.SpinCallerStream(time.Duration(spinUS) * time.Microsecond); err != nil {
					return err
				}
				if err := buf.FillFloat32(value, n); err != nil {
					return err
				}
				return buf.CopyToHost(AsBytes(out))
			}))
			wrong := 0
			for _, v := range out {
				if v != value {
					wrong++
				}
			}
			require.Zero(t, wrong, "the copy did not wait for the kernel on the caller stream (first %v)", out[0])
		})
	}
}

func TestAllocatorHostToDeviceOrderedOnCallerStream(t *testing.T) {
	for _, c := range fx.Cases(t, "allocator.json", "ordering_h2d") {
		t.Run(c.Name, func(t *testing.T) {
			fx.Begin(t, c)
			var n, spinUS int
			var value float32
			c.Get(t, "n", &n)
			c.Get(t, "spin_us", &spinUS)
			c.Get(t, "value", &value)
			in, out := make([]float32, n), make([]float32, n)
			for i := range in {
				in[i] = 0.25 * float32(i%1000)
			}
			testkernel.Require(t)
			buf, err := Alloc(4*n, OnDevice(CUDADevice(0)))
			require.NoError(t, err)
			defer buf.Close()
			s, err := NewStream(NonBlocking())
			require.NoError(t, err)
			defer s.Close()
			require.NoError(t, WithCallerStream(s, func() error {
				if err := testkernel.SpinCallerStream(time.Duration(spinUS) * time.Microsecond); err != nil {
					return err
				}
				if err := buf.FillFloat32(value, n); err != nil {
					return err
				}
				if err := buf.CopyFromHost(AsBytes(in)); err != nil {
					return err
				}
				return buf.CopyToHost(AsBytes(out))
			}))
			require.Equal(t, in, out, "the kernel ran after the copy")
		})
	}
}

func TestBufferMisuseIsAnErrorNotAPanic(t *testing.T) {
	var nilBuf *DeviceBuffer
	require.ErrorIs(t, nilBuf.CopyFromHost([]byte{1}), ErrInvalidArgument)
	require.ErrorIs(t, nilBuf.CopyToHost([]byte{1}), ErrInvalidArgument)
	require.ErrorIs(t, nilBuf.FillFloat32(1, 1), ErrInvalidArgument)
	require.NoError(t, nilBuf.Close())
	require.ErrorIs(t, AxpyFloat32(nil, nil, 1, 1), ErrInvalidArgument)

	_, err := Alloc(-1)
	require.ErrorIs(t, err, ErrInvalidArgument)
	_, err = Alloc(8, Aligned(-4))
	require.ErrorIs(t, err, ErrInvalidArgument)
	_, err = Alloc(8, OnDevice(CUDADevice(1000)))
	require.ErrorIs(t, err, ErrInvalidArgument)
	_, err = NewStream(StreamOnDevice(CUDADevice(-7)))
	require.ErrorIs(t, err, ErrInvalidArgument)

	// A buffer that owns nothing still checks sizes and state.
	empty := &DeviceBuffer{}
	require.ErrorIs(t, empty.CopyFromHost([]byte{1, 2}), ErrInvalidArgument)
	require.NoError(t, empty.Close())
	require.NoError(t, empty.Close(), "Close is idempotent")
	require.ErrorIs(t, empty.CopyToHost(nil), ErrInvalidState)
	require.ErrorIs(t, (&DeviceBuffer{size: 8}).CopyFromHost([]byte{1}, OnStream(nil)), ErrInvalidArgument)

	var nilStream *Stream
	require.ErrorIs(t, nilStream.Synchronize(), ErrInvalidArgument)
	_, err = nilStream.Device()
	require.ErrorIs(t, err, ErrInvalidArgument)
	require.NoError(t, nilStream.Close())
	require.Nil(t, nilStream.Handle())
}

// The kernel entry points (FillFloat32, AxpyFloat32), driven by testdata/kernels.json (also run by
// csrc/c_api/kernels_test.cc).
func TestKernelsFill(t *testing.T) {
	for _, c := range fx.Cases(t, "kernels.json", "fill") {
		t.Run(c.Name, func(t *testing.T) {
			fx.Begin(t, c)
			var n int
			var value float32
			var dst string
			c.Get(t, "n", &n)
			c.Get(t, "value", &value)
			c.Get(t, "dst", &dst)
			device := 0
			c.GetOr(t, "device_index", &device)

			if dst == "device" {
				buf, err := Alloc(4*max(n, 1), OnDevice(CUDADevice(0)))
				require.NoError(t, err)
				defer func() { require.NoError(t, buf.Close()) }()
				// Reach the C entry point with the fixture's device index, as C++ does.
				b := &DeviceBuffer{ptr: buf.ptr, size: buf.size, device: device} // aliases buf, not freed
				expectCode(t, c, b.FillFloat32(value, n))
				if c.IsNull("message") && n > 0 && device == 0 {
					got := make([]float32, n)
					require.NoError(t, buf.CopyToHost(AsBytes(got)))
					wrong := 0
					for _, v := range got {
						if v != value {
							wrong++
						}
					}
					require.Zero(t, wrong, "of %d elements, first %v, last %v", n, got[0], got[n-1])
				}
				return
			}
			// A host buffer or none: the C ABI must refuse before touching memory.
			host := make([]float32, n+1)
			b := &DeviceBuffer{size: 4 * n, device: device}
			if dst == "host" {
				b.ptr = pointerOf(host)
			}
			expectCode(t, c, b.FillFloat32(value, n))
			for _, v := range host {
				require.Zero(t, v, "a refused fill wrote host memory")
			}
		})
	}
}

func TestKernelsAxpy(t *testing.T) {
	for _, c := range fx.Cases(t, "kernels.json", "axpy") {
		t.Run(c.Name, func(t *testing.T) {
			fx.Begin(t, c)
			var a float32
			c.Get(t, "a", &a)
			if c.IsNull("x") {
				y := []float32{1}
				yb := &DeviceBuffer{ptr: pointerOf(y), size: 4}
				xb := &DeviceBuffer{size: 4} // a null pointer
				expectCode(t, c, AxpyFloat32(yb, xb, 1, a))
				return
			}
			var x, y, want []float32
			c.Get(t, "x", &x)
			c.Get(t, "y", &y)
			c.Get(t, "expect_y", &want)
			require.Len(t, y, len(x))
			xb, err := Alloc(4*len(x), OnDevice(CUDADevice(0)))
			require.NoError(t, err)
			defer xb.Close()
			yb, err := Alloc(4*len(y), OnDevice(CUDADevice(0)))
			require.NoError(t, err)
			defer yb.Close()
			require.NoError(t, xb.CopyFromHost(AsBytes(x)))
			require.NoError(t, yb.CopyFromHost(AsBytes(y)))
			expectCode(t, c, AxpyFloat32(yb, xb, len(x), a))
			got := make([]float32, len(y))
			require.NoError(t, yb.CopyToHost(AsBytes(got)))
			require.Equal(t, want, got)
		})
	}
}

// Two GPUs, from testdata/multi_gpu.json (csrc/c_api/multi_gpu_test.cc runs the same cases).
func TestMultiGPUCopy(t *testing.T) {
	for _, c := range fx.Cases(t, "multi_gpu.json", "copy") {
		t.Run(c.Name, func(t *testing.T) {
			fx.Begin(t, c)
			var bufDev, streamDev, index, n int
			c.Get(t, "buffer_device", &bufDev)
			c.Get(t, "stream_device", &streamDev)
			c.Get(t, "device_index", &index)
			c.Get(t, "nbytes", &n)
			buf, err := Alloc(n, OnDevice(CUDADevice(bufDev)))
			require.NoError(t, err)
			defer buf.Close()
			s, err := NewStream(NonBlocking(), StreamOnDevice(CUDADevice(streamDev)))
			require.NoError(t, err)
			defer s.Close()
			in, out := pattern(n, 1), make([]byte, n)
			// The case's device index, on this buffer's memory (b aliases buf and frees nothing).
			b := &DeviceBuffer{ptr: buf.ptr, size: buf.size, device: index}
			err = b.CopyFromHost(in, OnStream(s))
			expectCode(t, c, err)
			if err == nil {
				require.NoError(t, b.CopyToHost(out, OnStream(s)))
				require.True(t, bytes.Equal(in, out))
			}
		})
	}
}

// Benchmarks (run on the GPU machine by tools/gpu/perf.sh and run.sh --bench), each against
// raw CUDA called from Go in the same run: copies from pinned host memory, copies from
// ordinary Go slices (pageable: slimcuda stages them), device and pinned allocation on a
// cache hit, and the cost of one cgo call.

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
	buf, err := Alloc(64<<20, OnDevice(CUDADevice(0)))
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
	pinned, err := rawcuda.HostAlloc(64 << 20)
	if err != nil {
		b.Fatal(err)
	}
	defer rawcuda.HostFree(pinned)
	buf, err := Alloc(most, OnDevice(CUDADevice(0)))
	if err != nil {
		b.Fatal(err)
	}
	defer buf.Close()
	dev := buf.Pointer()
	for _, n := range []int{1 << 20, 2 << 20, 4 << 20, 8 << 20, 16 << 20, 64 << 20, most} {
		// The tensor path (Tensor.CopyFromHost: a model's inputs) goes through the same
		// transfer engine as the buffer path; both against raw CUDA, pageable and pinned.
		tensor, err := NewTensor([]int64{int64(n)}, Uint8, CUDADevice(0))
		if err != nil {
			b.Fatal(err)
		}
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
				{"raw-pinned=cudaMemcpy", func(h []byte) error { // the link's speed (up to 64 MiB)
					p := pinned[:len(h)]
					if dir == "H2D" {
						return rawcuda.CopyToDevice(dev, p)
					}
					return rawcuda.CopyToHost(p, dev)
				}},
				{"slimcuda-buffer", func(h []byte) error {
					if dir == "H2D" {
						return buf.CopyFromHost(h)
					}
					return buf.CopyToHost(h)
				}},
				{"slimcuda-tensor", func(h []byte) error {
					if dir == "H2D" {
						return CopyFromHost(tensor, h)
					}
					return CopyToHost(tensor, h)
				}},
			}
			for _, v := range ops {
				if v.name == "raw-pinned=cudaMemcpy" && n > len(pinned) {
					continue
				}
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
		if err := tensor.Close(); err != nil {
			b.Fatal(err)
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
				buf, err := Alloc(n, OnDevice(CUDADevice(0)))
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
