// SPDX-License-Identifier: Apache-2.0

package slimcuda

import (
	"encoding/json"
	"testing"

	"github.com/slimcuda/slimcuda/go/internal/fixture"
	"github.com/stretchr/testify/require"
)

// testdata/tensor.json through the Go Tensor API (slimcuda_tensor_*); csrc/shims/
// tensor_fixtures_test.cc runs the same cases through the aoti_torch_* shims.

type tensorSpec struct {
	Device json.RawMessage `json:"device"`
	DType  json.RawMessage `json:"dtype"`
	Sizes  []int64         `json:"sizes"`
	Values json.RawMessage `json:"values"`
	View   *struct {
		Sizes   []int64 `json:"sizes"`
		Strides []int64 `json:"strides"`
		Offset  int64   `json:"offset"`
	} `json:"view"`
}

func specDType(t *testing.T, raw json.RawMessage) DType {
	var name string
	if json.Unmarshal(raw, &name) == nil {
		d, ok := DTypeByName(name)
		require.True(t, ok, "dtype %s", name)
		return d
	}
	var code int32
	require.NoError(t, json.Unmarshal(raw, &code))
	return DType(code)
}

// specDevice maps a fixture device to a Device and whether it is pinned host memory.
func specDevice(t *testing.T, raw json.RawMessage, index int) (Device, bool) {
	var name string
	if json.Unmarshal(raw, &name) == nil {
		switch name {
		case "cpu":
			return Device{CPU, index}, false
		case "cuda":
			return Device{CUDA, index}, false
		case "pinned":
			return Device{CPU, index}, true
		case "pinned_cuda":
			return Device{CUDA, index}, true
		}
		t.Fatalf("unknown device %q", name)
	}
	var code int32
	require.NoError(t, json.Unmarshal(raw, &code))
	return Device{DeviceType(code), index}, false
}

func isFloating(d DType) bool { return d == Float16 || d == Float32 || d == Float64 || d == BFloat16 }

func numel(sizes []int64) int64 {
	n := int64(1)
	for _, s := range sizes {
		n *= s
	}
	return n
}

// build makes a spec's tensor and returns its view (or the base) and a cleanup.
func build(t *testing.T, s tensorSpec) (*Tensor, func()) {
	dtype := specDType(t, s.DType)
	device, pinned := specDevice(t, s.Device, 0)
	var opts []TensorOption
	if pinned {
		opts = append(opts, Pinned())
	}
	base, err := NewTensor(s.Sizes, dtype, device, opts...)
	require.NoError(t, err)
	if len(s.Values) > 0 {
		n := numel(s.Sizes)
		var arange string
		isArange := json.Unmarshal(s.Values, &arange) == nil
		if isFloating(dtype) {
			vals := make([]float64, n)
			if isArange {
				for i := range vals {
					vals[i] = float64(i)
				}
			} else {
				require.NoError(t, json.Unmarshal(s.Values, &vals))
			}
			require.NoError(t, CopyFromHost(base, vals))
		} else {
			vals := make([]int64, n)
			if isArange {
				for i := range vals {
					vals[i] = int64(i)
				}
			} else {
				require.NoError(t, json.Unmarshal(s.Values, &vals))
			}
			require.NoError(t, CopyFromHost(base, vals))
		}
	}
	if s.View == nil {
		return base, func() { base.Close() }
	}
	v, err := base.View(s.View.Sizes, s.View.Strides, s.View.Offset)
	require.NoError(t, err)
	return v, func() { v.Close(); base.Close() }
}

// checkValues compares t's contents (row-major through its view) with the case's
// expect_values / expect_at / expect_bits.
func checkValues(t *testing.T, c fixture.Case, x *Tensor) {
	// Read nothing unless asked: a case may check a view of 2^40 elements by its metadata.
	if !c.Has("expect_values") && !c.Has("expect_at") && !c.Has("expect_bits") {
		return
	}
	info, err := x.Info()
	require.NoError(t, err)
	n := info.Numel
	if isFloating(info.DType) {
		got := make([]float64, n)
		require.NoError(t, CopyToHost(x, got))
		var want []float64
		if c.GetOr(t, "expect_values", &want) {
			require.Equal(t, want, got)
		}
		var at [][2]float64
		if c.GetOr(t, "expect_at", &at) {
			for _, p := range at {
				require.Equal(t, p[1], got[int(p[0])], "element %v", p[0])
			}
		}
	} else {
		got := make([]int64, n)
		require.NoError(t, CopyToHost(x, got))
		var want []int64
		if c.GetOr(t, "expect_values", &want) {
			require.Equal(t, want, got)
		}
		var at [][2]int64
		if c.GetOr(t, "expect_at", &at) {
			for _, p := range at {
				require.Equal(t, p[1], got[p[0]], "element %d", p[0])
			}
		}
	}
	var bits []uint64
	if c.GetOr(t, "expect_bits", &bits) {
		got := make([]uint64, n)
		switch info.DType {
		case Float16:
			raw := make([]Float16Bits, n)
			require.NoError(t, CopyToHost(x, raw))
			for i, b := range raw {
				got[i] = uint64(b)
			}
		case BFloat16:
			raw := make([]BFloat16Bits, n)
			require.NoError(t, CopyToHost(x, raw))
			for i, b := range raw {
				got[i] = uint64(b)
			}
		default:
			t.Fatalf("expect_bits for %s", info.DType)
		}
		require.Equal(t, bits, got)
	}
}

func TestTensorEmpty(t *testing.T) {
	for _, c := range fx.Cases(t, "tensor.json", "empty") {
		t.Run(c.Name, func(t *testing.T) {
			fx.Begin(t, c)
			var sizes, strides []int64
			var rawDevice, rawDType json.RawMessage
			c.Get(t, "sizes", &sizes)
			c.GetOr(t, "strides", &strides)
			c.Get(t, "device", &rawDevice)
			c.Get(t, "dtype", &rawDType)
			index := 0
			c.GetOr(t, "device_index", &index)
			device, pinned := specDevice(t, rawDevice, index)
			dtype := specDType(t, rawDType)
			var opts []TensorOption
			if strides != nil {
				opts = append(opts, WithStrides(strides...))
			}
			if pinned {
				opts = append(opts, Pinned())
			}
			x, err := NewTensor(sizes, dtype, device, opts...)
			expectCode(t, c, err)
			if err != nil {
				require.Nil(t, x)
				return
			}
			defer x.Close()
			info, err := x.Info()
			require.NoError(t, err)
			var wantStrides []int64
			var wantNumel, wantBytes int64
			var wantContiguous bool
			c.Get(t, "expect_strides", &wantStrides)
			c.Get(t, "expect_numel", &wantNumel)
			c.Get(t, "expect_storage_bytes", &wantBytes)
			c.Get(t, "expect_contiguous", &wantContiguous)
			require.Equal(t, sizes, info.Sizes)
			require.Equal(t, wantStrides, info.Strides)
			require.Equal(t, wantNumel, info.Numel)
			require.Equal(t, wantBytes, info.StorageBytes)
			require.Equal(t, wantContiguous, info.Contiguous)
			require.Equal(t, dtype, info.DType)
			require.Equal(t, pinned, info.Pinned)
			require.Zero(t, info.StorageOffset)
			require.Equal(t, wantBytes == 0, info.Data == nil)
			if pinned {
				require.Equal(t, CPU, info.Device.Type)
			} else {
				require.Equal(t, device.Type, info.Device.Type)
			}
			var wantIndex int
			if c.GetOr(t, "expect_device_index", &wantIndex) {
				require.Equal(t, wantIndex, info.Device.Index)
			}
		})
	}
}

func TestTensorView(t *testing.T) {
	for _, c := range fx.Cases(t, "tensor.json", "view") {
		t.Run(c.Name, func(t *testing.T) {
			fx.Begin(t, c)
			var base tensorSpec
			var sizes, strides []int64
			var offset int64
			c.Get(t, "base", &base)
			c.Get(t, "sizes", &sizes)
			c.Get(t, "strides", &strides)
			c.Get(t, "offset", &offset)
			b, done := build(t, base)
			defer done()
			v, err := b.View(sizes, strides, offset)
			expectCode(t, c, err)
			if err != nil {
				return
			}
			defer v.Close()
			info, err := v.Info()
			require.NoError(t, err)
			require.Equal(t, sizes, info.Sizes)
			require.Equal(t, strides, info.Strides)
			checkValues(t, c, v)
		})
	}
}

func TestTensorCopy(t *testing.T) {
	for _, c := range fx.Cases(t, "tensor.json", "copy") {
		t.Run(c.Name, func(t *testing.T) {
			fx.Begin(t, c)
			var srcSpec, dstSpec tensorSpec
			c.Get(t, "src", &srcSpec)
			c.Get(t, "dst", &dstSpec)
			src, doneSrc := build(t, srcSpec)
			defer doneSrc()
			dst, doneDst := build(t, dstSpec)
			defer doneDst()
			err := dst.CopyFrom(src)
			expectCode(t, c, err)
			if err == nil {
				checkValues(t, c, dst)
			}
		})
	}
}

func TestTensorClone(t *testing.T) {
	for _, c := range fx.Cases(t, "tensor.json", "clone") {
		t.Run(c.Name, func(t *testing.T) {
			fx.Begin(t, c)
			var srcSpec tensorSpec
			var preserve, wantPinned bool
			var wantStrides []int64
			var wantBytes int64
			c.Get(t, "src", &srcSpec)
			c.Get(t, "preserve_strides", &preserve)
			c.Get(t, "expect_strides", &wantStrides)
			c.Get(t, "expect_storage_bytes", &wantBytes)
			c.GetOr(t, "expect_pinned", &wantPinned)
			src, done := build(t, srcSpec)
			defer done()
			out, err := src.Clone(preserve)
			expectCode(t, c, err)
			if err != nil {
				return
			}
			defer out.Close()
			info, err := out.Info()
			require.NoError(t, err)
			srcInfo, err := src.Info()
			require.NoError(t, err)
			require.Equal(t, wantStrides, info.Strides)
			require.Equal(t, wantBytes, info.StorageBytes)
			require.Equal(t, srcInfo.Device, info.Device)
			require.Equal(t, wantPinned, info.Pinned)
			checkValues(t, c, out)
		})
	}
}

func TestTensorMisuseIsAnErrorNotAPanic(t *testing.T) {
	var nilT *Tensor
	_, err := nilT.Info()
	require.ErrorIs(t, err, ErrInvalidArgument)
	require.NoError(t, nilT.Close())
	x, err := NewTensor([]int64{2, 2}, Float32, Device{CPU, 0})
	require.NoError(t, err)
	require.ErrorIs(t, CopyFromHost(x, []float32{1, 2, 3}), ErrInvalidArgument, "wrong element count")
	// CopyFromHost(x, []string{"a"}) does not compile: HostElement admits only the dtypes' Go types.
	require.ErrorIs(t, CopyFromHost(x, []float32{1, 2, 3, 4}, OnStream(nil)), ErrInvalidArgument)
	_, err = x.View([]int64{2}, []int64{1, 1}, 0)
	require.ErrorIs(t, err, ErrInvalidArgument, "strides and sizes differ in length")
	_, err = NewTensor([]int64{2}, Float32, Device{CPU, 0}, WithStrides(1, 1))
	require.ErrorIs(t, err, ErrInvalidArgument)
	_, err = NewTensor([]int64{2}, Float32, Device{CUDA, 500})
	require.ErrorIs(t, err, ErrInvalidArgument)
	require.NoError(t, x.Close())
	require.NoError(t, x.Close(), "Close is idempotent")
	require.ErrorIs(t, CopyFromHost(x, []float32{1, 2, 3, 4}), ErrInvalidState)
	y, err := NewTensor([]int64{4}, Float32, Device{CPU, 0})
	require.NoError(t, err)
	defer y.Close()
	require.ErrorIs(t, y.CopyFrom(x), ErrInvalidState, "a closed source")
	require.Equal(t, "bfloat16", BFloat16.String())
	require.Equal(t, 2, BFloat16.Size())
	require.Equal(t, "DType(99)", DType(99).String())
	require.Equal(t, "cuda:1", Device{CUDA, 1}.String())
}

// Two GPUs: tensor copies from testdata/multi_gpu.json.
func TestMultiGPUTensorCopy(t *testing.T) {
	for _, c := range fx.Cases(t, "multi_gpu.json", "tensor_copy") {
		t.Run(c.Name, func(t *testing.T) {
			fx.Begin(t, c)
			var srcDev, dstDev int
			var srcName, dstName string
			var sizes []int64
			var transpose bool
			c.Get(t, "src_device", &srcDev)
			c.Get(t, "dst_device", &dstDev)
			c.Get(t, "src_dtype", &srcName)
			c.Get(t, "dst_dtype", &dstName)
			c.Get(t, "sizes", &sizes)
			c.Get(t, "transpose_dst", &transpose)
			srcType, _ := DTypeByName(srcName)
			dstType, _ := DTypeByName(dstName)
			n := sizes[0] * sizes[1]
			values := make([]float64, n)
			for i := range values {
				values[i] = float64(i)
			}
			src, err := NewTensor(sizes, srcType, Device{CUDA, srcDev})
			require.NoError(t, err)
			defer src.Close()
			require.NoError(t, CopyFromHost(src, values))
			var dst *Tensor
			if transpose {
				base, err := NewTensor([]int64{sizes[1], sizes[0]}, dstType, Device{CUDA, dstDev})
				require.NoError(t, err)
				defer base.Close()
				dst, err = base.View(sizes, []int64{1, sizes[0]}, 0)
				require.NoError(t, err)
			} else {
				dst, err = NewTensor(sizes, dstType, Device{CUDA, dstDev})
				require.NoError(t, err)
			}
			defer dst.Close()
			err = dst.CopyFrom(src)
			expectCode(t, c, err)
			if err != nil {
				return
			}
			got := make([]float64, n)
			require.NoError(t, CopyToHost(dst, got))
			require.Equal(t, values, got)
			info, err := dst.Info()
			require.NoError(t, err)
			require.Equal(t, dstDev, info.Device.Index)
		})
	}
}
