// SPDX-License-Identifier: Apache-2.0

package slimcuda

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TensorFrom, ToSlice, Sizes, DType and CloseAll: a host slice in, a host slice out, on
// every element type, on the CPU and (with a GPU) on CUDA; bad input is an error.

// roundTrip makes a tensor from data on device and reads it back, checking the metadata.
func roundTrip[T HostElement](t *testing.T, device Device, shape []int64, data []T, opts ...CallOption) {
	t.Helper()
	x, err := TensorFrom(shape, data, device, opts...)
	require.NoError(t, err)
	defer x.Close()
	require.Equal(t, shape, x.Sizes())
	require.Equal(t, HostDType[T](), x.DType())
	info, err := x.Info()
	require.NoError(t, err)
	require.Equal(t, device.Type, info.Device.Type)
	require.True(t, info.Contiguous)
	got, err := ToSlice[T](x, opts...)
	require.NoError(t, err)
	require.Equal(t, data, got)
}

func roundTripEveryType(t *testing.T, device Device, opts ...CallOption) {
	shape := []int64{2, 3}
	t.Run("uint8", func(t *testing.T) { roundTrip(t, device, shape, []uint8{0, 1, 2, 3, 254, 255}, opts...) })
	t.Run("int8", func(t *testing.T) { roundTrip(t, device, shape, []int8{-128, -1, 0, 1, 2, 127}, opts...) })
	t.Run("int16", func(t *testing.T) { roundTrip(t, device, shape, []int16{-32768, -1, 0, 1, 2, 32767}, opts...) })
	t.Run("int32", func(t *testing.T) { roundTrip(t, device, shape, []int32{math.MinInt32, -1, 0, 1, 2, 7}, opts...) })
	t.Run("int64", func(t *testing.T) { roundTrip(t, device, shape, []int64{math.MinInt64, -1, 0, 1, 2, 1 << 60}, opts...) })
	t.Run("float16", func(t *testing.T) {
		roundTrip(t, device, shape, []Float16Bits{0x3c00, 0xc000, 0x0001, 0x7bff, 0, 0x8000}, opts...)
	})
	t.Run("float32", func(t *testing.T) { roundTrip(t, device, shape, []float32{0.5, -1.25, 3e38, 1e-45, 0, 7}, opts...) })
	t.Run("float64", func(t *testing.T) { roundTrip(t, device, shape, []float64{0.1, -2, 1e308, 5e-324, 0, 9}, opts...) })
	t.Run("bool", func(t *testing.T) {
		roundTrip(t, device, shape, []bool{true, false, false, true, true, false}, opts...)
	})
	t.Run("bfloat16", func(t *testing.T) {
		roundTrip(t, device, shape, []BFloat16Bits{0x3f80, 0xc000, 0x0001, 0x7f7f, 0, 0x8000}, opts...)
	})
	t.Run("scalar", func(t *testing.T) { roundTrip(t, device, []int64{}, []float32{42}, opts...) })
}

func TestTensorFromAndToSliceOnTheCPU(t *testing.T) {
	roundTripEveryType(t, CPUDevice)
}

func TestTensorFromAndToSliceOnCUDAOnACallerStream(t *testing.T) {
	requireGPU(t)
	s, err := NewStream(NonBlocking())
	require.NoError(t, err)
	defer s.Close()
	roundTripEveryType(t, CUDADevice(0), OnStream(s))
	t.Run("WithCallerStream", func(t *testing.T) {
		require.NoError(t, WithCallerStream(s, func() error {
			roundTrip(t, CurrentCUDA, []int64{4}, []float32{1, 2, 3, 4})
			return nil
		}))
	})
}

// A tensor with no elements is made from an empty (or nil) slice and read back as an
// empty slice, not nil: "no elements", not "no answer".
func TestTensorFromAnEmptyShape(t *testing.T) {
	x, err := TensorFrom([]int64{0, 3}, []float32(nil), CPUDevice)
	require.NoError(t, err)
	defer x.Close()
	require.Equal(t, []int64{0, 3}, x.Sizes())
	got, err := ToSlice[float32](x)
	require.NoError(t, err)
	require.NotNil(t, got)
	require.Empty(t, got)
}

func TestTensorFromRefusesBadInput(t *testing.T) {
	closed, err := NewStream()
	if err != nil { // no GPU: a wrapped stream closes without CUDA
		closed = WrapStream(fakeHandle(0x7300))
	}
	require.NoError(t, closed.Close())
	tests := []struct {
		description string
		make        func() (*Tensor, error)
		code        ErrorCode
		message     string
	}{
		{"too few elements", func() (*Tensor, error) {
			return TensorFrom([]int64{2, 3}, []float32{1, 2, 3, 4, 5}, CPUDevice)
		}, ErrInvalidArgument, "5 float32 elements for shape [2 3], which has 6"},
		{"too many elements", func() (*Tensor, error) {
			return TensorFrom([]int64{1}, []int64{1, 2}, CPUDevice)
		}, ErrInvalidArgument, "2 int64 elements for shape [1], which has 1"},
		{"nil data for a shape with elements", func() (*Tensor, error) {
			return TensorFrom[float32]([]int64{2}, nil, CPUDevice)
		}, ErrInvalidArgument, "0 float32 elements for shape [2]"},
		{"a negative size", func() (*Tensor, error) {
			return TensorFrom([]int64{-1, 2}, []float32{}, CPUDevice)
		}, ErrInvalidArgument, "negative size in [-1 2]"},
		{"a shape whose element count overflows", func() (*Tensor, error) {
			return TensorFrom([]int64{1 << 40, 1 << 40}, []float32{}, CPUDevice)
		}, ErrInvalidArgument, "more elements than an int counts"},
		{"an unknown device type", func() (*Tensor, error) {
			return TensorFrom([]int64{1}, []float32{1}, Device{Type: DeviceType(9)})
		}, ErrInvalidArgument, ""},
		{"a device index past int32", func() (*Tensor, error) {
			return TensorFrom([]int64{1}, []float32{1}, Device{Type: CUDA, Index: 1 << 40})
		}, ErrInvalidArgument, "device index"},
		{"a rank past slimcuda's limit", func() (*Tensor, error) {
			return TensorFrom(make([]int64, 26), []float32{}, CPUDevice)
		}, ErrInvalidArgument, ""},
		{"OnStream(nil)", func() (*Tensor, error) {
			return TensorFrom([]int64{1}, []float32{1}, CPUDevice, OnStream(nil))
		}, ErrInvalidArgument, "OnStream(nil)"},
		{"a closed stream", func() (*Tensor, error) {
			return TensorFrom([]int64{1}, []float32{1}, CPUDevice, OnStream(closed))
		}, ErrInvalidState, ""},
	}
	for _, tc := range tests {
		t.Run(tc.description, func(t *testing.T) {
			x, err := tc.make()
			require.ErrorIs(t, err, tc.code)
			require.Nil(t, x)
			require.Contains(t, err.Error(), "slimcuda: TensorFrom: ")
			require.Contains(t, err.Error(), tc.message)
		})
	}
}

func TestToSliceRefusesBadInput(t *testing.T) {
	x, err := TensorFrom([]int64{2, 2}, []int32{1, 2, 3, 4}, CPUDevice)
	require.NoError(t, err)
	defer x.Close()
	one, err := TensorFrom([]int64{1}, []float32{1}, CPUDevice)
	require.NoError(t, err)
	defer one.Close()
	broadcast, err := one.View([]int64{1 << 40}, []int64{0}, 0) // 2^40 elements over 4 bytes
	require.NoError(t, err)
	defer broadcast.Close()
	closed, err := TensorFrom([]int64{1}, []float32{1}, CPUDevice)
	require.NoError(t, err)
	require.NoError(t, closed.Close())
	tests := []struct {
		description string
		read        func() error
		code        ErrorCode
		message     string
	}{
		{"a nil tensor", func() error { _, err := ToSlice[float32](nil); return err }, ErrInvalidArgument, "nil tensor"},
		{"a closed tensor", func() error { _, err := ToSlice[float32](closed); return err }, ErrInvalidState,
			"tensor is closed"},
		{"another dtype", func() error { _, err := ToSlice[float32](x); return err }, ErrInvalidArgument,
			"the tensor is int32, ToSlice reads it into []float32 only as float32 (CopyToHost converts)"},
		{"another 16-bit float", func() error {
			_, err := ToSlice[Float16Bits](x)
			return err
		}, ErrInvalidArgument, "into []Float16Bits only as float16"},
		{"a wider integer", func() error { _, err := ToSlice[int64](x); return err }, ErrInvalidArgument,
			"the tensor is int32"},
		{"a broadcast view larger than its storage", func() error {
			_, err := ToSlice[float32](broadcast)
			return err
		}, ErrInvalidArgument, "more elements than its storage of 4 bytes holds"},
	}
	for _, tc := range tests {
		t.Run(tc.description, func(t *testing.T) {
			err := tc.read()
			require.ErrorIs(t, err, tc.code)
			require.Contains(t, err.Error(), "slimcuda: ToSlice: ")
			require.Contains(t, err.Error(), tc.message)
		})
	}
	// The refusals left x as it was.
	got, err := ToSlice[int32](x)
	require.NoError(t, err)
	require.Equal(t, []int32{1, 2, 3, 4}, got)
}

// Sizes and DType describe views and clones too, return copies, and keep describing a
// closed tensor (accessors that cannot fail, doc.go "Close").
func TestSizesAndDTypeDescribeEveryTensor(t *testing.T) {
	x, err := NewTensor([]int64{2, 3}, BFloat16, CPUDevice)
	require.NoError(t, err)
	defer x.Close()
	require.Equal(t, []int64{2, 3}, x.Sizes())
	require.Equal(t, BFloat16, x.DType())
	x.Sizes()[0] = 99
	require.Equal(t, []int64{2, 3}, x.Sizes(), "Sizes returns a copy")
	v, err := x.View([]int64{3, 2}, []int64{1, 3}, 0)
	require.NoError(t, err)
	c, err := v.Clone(false)
	require.NoError(t, err)
	for _, y := range []*Tensor{v, c} {
		require.Equal(t, []int64{3, 2}, y.Sizes())
		require.Equal(t, BFloat16, y.DType())
	}
	require.NoError(t, CloseAll(v, c))
	require.Equal(t, []int64{3, 2}, v.Sizes(), "a closed tensor keeps its sizes")
	require.Equal(t, BFloat16, c.DType(), "and its dtype")
	var none *Tensor
	require.Nil(t, none.Sizes())
	require.Equal(t, UnknownDType, none.DType())
}

// CloseAll closes each tensor (nil ones are skipped, closed ones are no-ops).
func TestCloseAllClosesEveryTensor(t *testing.T) {
	var ts []*Tensor
	for i := 0; i < 3; i++ {
		x, err := TensorFrom([]int64{1}, []float32{float32(i)}, CPUDevice)
		require.NoError(t, err)
		ts = append(ts, x)
	}
	require.NoError(t, ts[1].Close())
	require.NoError(t, CloseAll(ts[0], nil, ts[1], ts[2]))
	for i, x := range ts {
		_, err := ToSlice[float32](x)
		require.ErrorIs(t, err, ErrInvalidState, "tensor %d", i)
	}
	require.NoError(t, CloseAll())
}

// A run's outputs read with ToSlice equal what CopyToHost reads, and carry their sizes
// and dtype (the demo model: y = f(x), [B, 16] -> [B, 8]).
func TestToSliceReadsARunsOutputs(t *testing.T) {
	m, err := Load(demoPackage(t), LoadOnDevice(CPUDevice))
	require.NoError(t, err)
	defer m.Close()
	x, err := TensorFrom([]int64{2, 16}, concurrentInput(3), CPUDevice)
	require.NoError(t, err)
	defer x.Close()
	outs, err := m.Run([]*Tensor{x})
	require.NoError(t, err)
	defer CloseAll(outs...)
	require.Len(t, outs, 1)
	require.Equal(t, []int64{2, 8}, outs[0].Sizes())
	require.Equal(t, Float32, outs[0].DType())
	got, err := ToSlice[float32](outs[0])
	require.NoError(t, err)
	want := make([]float32, 16)
	require.NoError(t, CopyToHost(outs[0], want))
	require.Equal(t, want, got)
	want2, err := runDemo(m, concurrentInput(3))
	require.NoError(t, err)
	require.Equal(t, want2, got)
}
