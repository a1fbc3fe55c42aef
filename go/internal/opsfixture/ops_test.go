// SPDX-License-Identifier: Apache-2.0

package opsfixture

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/slimcuda/slimcuda/go/internal/fixture"
	"github.com/stretchr/testify/require"
)

// testdata/ops.json through the fallback op shims, from Go (csrc/ops/ops_fixtures_test.cc
// runs the same cases from C++). Inputs come from each case's seed, as the file describes.

var fx *fixture.Suite

func TestMain(m *testing.M) {
	fx = fixture.NewSuite(DeviceCount(), "ops.json")
	code := m.Run()
	if err := fx.Verify(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

func splitmix64(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	z := x
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

func inputValue(seed, t int64, j int) float64 {
	r := splitmix64(uint64(seed)*1000003 + uint64(t)*7919 + uint64(j))
	return (float64(r%17) - 8) / 8
}

type operandSpec struct {
	Sizes   []int64 `json:"sizes"`
	Strides []int64 `json:"strides"`
	Fill    string  `json:"fill"`
}

func inputs(t *testing.T, c fixture.Case, dtype string, cuda bool) []*Tensor {
	var seed int64
	var specs []operandSpec
	c.Get(t, "seed", &seed)
	c.Get(t, "inputs", &specs)
	var out []*Tensor
	for i, s := range specs {
		strides := s.Strides
		if strides == nil {
			strides = Contiguous(s.Sizes)
		}
		idx := int64(i)
		nan := s.Fill == "nan"
		tensor, err := NewTensor(s.Sizes, strides, dtype, cuda, func(j int) float64 {
			if nan {
				return math.NaN()
			}
			return inputValue(seed, idx, j)
		})
		require.NoError(t, err)
		t.Cleanup(tensor.Close)
		out = append(out, tensor)
	}
	return out
}

func expectValues(t *testing.T, c fixture.Case, got *Tensor, dtype string) {
	vals, sizes, _, err := got.Values(dtype)
	require.NoError(t, err)
	var wantSizes []int64
	var want []float64
	var atol, rtol float64
	c.Get(t, "expect_sizes", &wantSizes)
	c.Get(t, "expected", &want)
	c.Get(t, "atol", &atol)
	c.Get(t, "rtol", &rtol)
	if len(wantSizes) == 0 {
		wantSizes = nil
	}
	require.Equal(t, wantSizes, sizes)
	require.Len(t, vals, len(want))
	for i := range want {
		if !(math.Abs(vals[i]-want[i]) <= atol+rtol*math.Abs(want[i])) {
			t.Fatalf("element %d = %v, want %v", i, vals[i], want[i])
		}
	}
}

func valueCase(t *testing.T, c fixture.Case) (dtype string, cuda bool) {
	var device string
	c.Get(t, "dtype", &dtype)
	c.Get(t, "device", &device)
	return dtype, device == "cuda"
}

func TestGemm(t *testing.T) {
	for _, c := range fx.Cases(t, "ops.json", "gemm") {
		t.Run(c.Name, func(t *testing.T) {
			if !fx.Begin(t, c) {
				t.Skip("needs a GPU")
			}
			dtype, cuda := valueCase(t, c)
			in := inputs(t, c, dtype, cuda)
			var fn string
			c.Get(t, "fn", &fn)
			beta, alpha := 1.0, 1.0
			c.GetOr(t, "beta", &beta)
			c.GetOr(t, "alpha", &alpha)
			var useGelu int32
			c.GetOr(t, "use_gelu", &useGelu)
			var out *Tensor
			if fn != "addmm_activation" {
				var sizes []int64
				c.Get(t, "expect_sizes", &sizes)
				strides := Contiguous(sizes)
				var o struct {
					Strides []int64 `json:"strides"`
				}
				if c.GetOr(t, "out", &o) && o.Strides != nil {
					strides = o.Strides
				}
				var err error
				out, err = NewTensor(sizes, strides, dtype, cuda, func(int) float64 { return -7 })
				require.NoError(t, err)
				defer out.Close()
			}
			ret, err := Gemm(fn, cuda, out, in, beta, alpha, useGelu)
			require.NoError(t, err)
			if ret != nil {
				defer ret.Close()
				out = ret
			}
			expectValues(t, c, out, dtype)
		})
	}
}

func convLists(t *testing.T, c fixture.Case, spatial int) (stride, padding, dilation, outputPadding []int64) {
	get := func(key string, dflt int64) []int64 {
		var v []int64
		if !c.GetOr(t, key, &v) {
			for i := 0; i < spatial; i++ {
				v = append(v, dflt)
			}
		}
		return v
	}
	return get("stride", 1), get("padding", 0), get("dilation", 1), get("output_padding", 0)
}

func TestConvolution(t *testing.T) {
	for _, c := range fx.Cases(t, "ops.json", "convolution") {
		t.Run(c.Name, func(t *testing.T) {
			if !fx.Begin(t, c) {
				t.Skip("needs a GPU")
			}
			dtype, cuda := valueCase(t, c)
			in := inputs(t, c, dtype, cuda)
			var bias *Tensor
			if len(in) > 2 {
				bias = in[2]
			}
			var transposed int32
			var groups int64 = 1
			c.GetOr(t, "transposed", &transposed)
			c.GetOr(t, "groups", &groups)
			var specs []operandSpec
			c.Get(t, "inputs", &specs)
			s, p, d, op := convLists(t, c, len(specs[0].Sizes)-2)
			out, err := Convolution(cuda, in[0], in[1], bias, s, p, d, op, transposed != 0, groups)
			require.NoError(t, err)
			defer out.Close()
			expectValues(t, c, out, dtype)
		})
	}
}

var codes = map[string]int32{"Ok": 0, "NotSupported": 0x10, "NotImplemented": 0x11, "InvalidArgument": 0x12,
	"InvalidType": 0x13}

func TestBadInput(t *testing.T) {
	for _, c := range fx.Cases(t, "ops.json", "gemm_error") {
		t.Run(c.Name, func(t *testing.T) {
			if !fx.Begin(t, c) {
				t.Skip("needs a GPU")
			}
			var device, fn, null, expect, message string
			c.Get(t, "device", &device)
			c.Get(t, "fn", &fn)
			c.GetOr(t, "null", &null)
			c.Get(t, "expect", &expect)
			c.GetOr(t, "message", &message)
			on := device
			c.GetOr(t, "tensors_on", &on)
			var dtypes []string
			var sizes [][]int64
			c.Get(t, "dtypes", &dtypes)
			c.Get(t, "sizes", &sizes)
			var ts []*Tensor
			for i := range sizes {
				tensor, err := NewTensor(sizes[i], Contiguous(sizes[i]), dtypes[i], on == "cuda",
					func(int) float64 { return 1 })
				require.NoError(t, err)
				defer tensor.Close()
				ts = append(ts, tensor)
			}
			var names []string
			switch fn {
			case "convolution":
				names = []string{"input", "weight"}
			case "addmm_activation":
				names = []string{"self", "mat1", "mat2"}
			case "mm", "bmm":
				names = []string{"out", "self", "mat2"}
			default:
				names = []string{"out", "self", "mat1", "mat2"}
			}
			for i, n := range names {
				if n == null && i < len(ts) {
					ts[i] = nil
				}
			}
			cuda := device == "cuda"
			var ret *Tensor
			var err error
			switch fn {
			case "convolution":
				var groups int64 = 1
				c.GetOr(t, "groups", &groups)
				s, p, d, op := convLists(t, c, len(sizes[0])-2)
				ret, err = Convolution(cuda, ts[0], ts[1], nil, s, p, d, op, false, groups)
			case "addmm_activation":
				ret, err = Gemm(fn, cuda, nil, ts, 1, 1, 0)
			default:
				ret, err = Gemm(fn, cuda, ts[0], ts[1:], 1, 1, 0)
			}
			ret.Close()
			want, ok := codes[expect]
			require.True(t, ok, "unknown error name %q", expect)
			if want == 0 {
				require.NoError(t, err)
				return
			}
			var e *Error
			require.True(t, errors.As(err, &e), "want %s, got %v", expect, err)
			require.Equal(t, want, e.Code, "%v", err)
			require.True(t, strings.Contains(e.Message, message), "%q does not mention %q", e.Message, message)
		})
	}
}
