package slimcuda

import (
	"bytes"
	"math"
	"testing"
	"time"
	"unsafe"

	"github.com/slimcuda/slimcuda/go/internal/fixture"
	"github.com/stretchr/testify/require"
)

// The CUDA allocator and copy contract from testdata/allocator.json (csrc/allocator/
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
			if !fx.Begin(t, c) {
				t.Skip("needs " + c.Requires)
			}
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
				b, err := Alloc(nbytes+16, OnDevice(0))
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
			if !fx.Begin(t, c) {
				t.Skip("needs " + c.Requires)
			}
			var nbytes int
			var stream string
			c.Get(t, "nbytes", &nbytes)
			c.Get(t, "stream", &stream)
			buf, err := Alloc(nbytes, OnDevice(deviceIndex(t, c)))
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
			if !fx.Begin(t, c) {
				t.Skip("needs " + c.Requires)
			}
			var nbytes float64 // may exceed int on purpose; checked below
			var alignment int
			c.Get(t, "nbytes", &nbytes)
			c.Get(t, "alignment", &alignment)
			require.Less(t, nbytes, float64(math.MaxInt))
			buf, err := Alloc(int(nbytes), OnDevice(deviceIndex(t, c)), Aligned(alignment))
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
			if !fx.Begin(t, c) {
				t.Skip("needs " + c.Requires)
			}
			var n, spinUS int
			var value float32
			c.Get(t, "n", &n)
			c.Get(t, "spin_us", &spinUS)
			c.Get(t, "value", &value)
			buf, err := Alloc(4*n, OnDevice(0))
			require.NoError(t, err)
			defer buf.Close()
			require.NoError(t, buf.FillFloat32(0, n))
			require.NoError(t, DefaultStream().Synchronize())
			s, err := NewStream(NonBlocking())
			require.NoError(t, err)
			defer s.Close()
			out := make([]float32, n)
			require.NoError(t, WithCallerStream(s, func() error {
				if err := spin(time.Duration(spinUS)*time.Microsecond, 0); err != nil {
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
			if !fx.Begin(t, c) {
				t.Skip("needs " + c.Requires)
			}
			var n, spinUS int
			var value float32
			c.Get(t, "n", &n)
			c.Get(t, "spin_us", &spinUS)
			c.Get(t, "value", &value)
			in, out := make([]float32, n), make([]float32, n)
			for i := range in {
				in[i] = 0.25 * float32(i%1000)
			}
			buf, err := Alloc(4*n, OnDevice(0))
			require.NoError(t, err)
			defer buf.Close()
			s, err := NewStream(NonBlocking())
			require.NoError(t, err)
			defer s.Close()
			require.NoError(t, WithCallerStream(s, func() error {
				if err := spin(time.Duration(spinUS)*time.Microsecond, 0); err != nil {
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
	_, err = Alloc(8, OnDevice(1000))
	require.ErrorIs(t, err, ErrInvalidArgument)
	_, err = NewStream(StreamOnDevice(-7))
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

func TestErrorsWrapTheirCode(t *testing.T) {
	err := copyRaw(&DeviceBuffer{size: 4}, nil, 4, true, nil)
	require.ErrorIs(t, err, ErrInvalidArgument)
	require.NotErrorIs(t, err, ErrInternal)
	var e *Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, ErrInvalidArgument, e.Code)
	require.Contains(t, e.Error(), "slimcuda: ")
	require.Contains(t, e.Message, "slimcuda_copy_host_to_device")
	require.Equal(t, "InvalidArgument", ErrInvalidArgument.String())
	require.Equal(t, "ErrorCode(0x77)", ErrorCode(0x77).String())
	for code, name := range codeNames {
		got, ok := CodeByName(name)
		require.True(t, ok)
		require.Equal(t, code, got)
	}
	_, ok := CodeByName("NoSuchCode")
	require.False(t, ok)
}
