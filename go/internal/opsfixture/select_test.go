// SPDX-License-Identifier: Apache-2.0

package opsfixture

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/slimcuda/slimcuda/go/internal/fixture"
	"github.com/stretchr/testify/require"
)

// testdata/select_ops.json through the data-dependent selection shims (nonzero,
// nonzero_static, masked_select, index_Tensor), from Go (csrc/ops/select/select_ops_test.cc
// runs the same cases from C++). testdata/unique_ops.json's ops are reached through the proxy
// executor only, which Go cannot call without a model: C++ runs those.

// selectSpec is one operand of a selection case (tools/ops/make_select_fixtures.py).
type selectSpec struct {
	Dtype      string   `json:"dtype"`
	Sizes      []int64  `json:"sizes"`
	Strides    []int64  `json:"strides"`
	Offset     int64    `json:"offset"`
	Values     []any    `json:"values"`
	Fill       any      `json:"fill"`
	ZeroWithin *float64 `json:"zero_within"`
	On         string   `json:"on"` // "cpu": this operand on the CPU whatever the case's device
}

func isFloating(dtype string) bool {
	return dtype == "float32" || dtype == "float64" || dtype == "float16" || dtype == "bfloat16"
}

// specValues are the spec's elements in row-major order: listed, one fill, or generated
// from the seed (operand t) as the generator does.
func specValues(t *testing.T, s selectSpec, seed, operand int64) []float64 {
	n := 1
	for _, x := range s.Sizes {
		n *= int(x)
	}
	if s.Values != nil {
		return fixtureNumbers(t, s.Values)
	}
	out := make([]float64, n)
	if s.Fill != nil {
		v := fixtureNumbers(t, []any{s.Fill})[0]
		for j := range out {
			out[j] = v
		}
		return out
	}
	for j := range out {
		v := inputValue(seed, operand, j)
		if s.ZeroWithin != nil && math.Abs(v) <= *s.ZeroWithin {
			v = 0
		}
		switch {
		case isFloating(s.Dtype):
			out[j] = v
		case s.Dtype == "uint8":
			out[j] = 8 * math.Abs(v)
		case s.Dtype == "bool":
			if v != 0 {
				out[j] = 1
			}
		default:
			out[j] = 8 * v
		}
	}
	return out
}

func selectTensor(t *testing.T, s selectSpec, seed, operand int64, cuda bool) *Tensor {
	strides := s.Strides
	if strides == nil {
		strides = Contiguous(s.Sizes)
	}
	vals := specValues(t, s, seed, operand)
	cuda = cuda && s.On != "cpu"
	x, err := NewTensorAt(s.Sizes, strides, s.Offset, s.Dtype, cuda, func(j int) float64 { return vals[j] })
	require.NoError(t, err)
	t.Cleanup(x.Close)
	return x
}

// selectCall makes the case's operands on `on` and calls its shim on the case's device.
func selectCall(t *testing.T, c fixture.Case, fn string, cuda, on bool, null string) (*Tensor, error) {
	var seed int64 = 1
	var specs []selectSpec
	c.GetOr(t, "seed", &seed)
	c.Get(t, "inputs", &specs)
	var a SelectArgs
	self := selectTensor(t, specs[0], seed, 0, on)
	if len(specs) > 1 {
		a.Mask = selectTensor(t, specs[1], seed, 1, on)
	}
	c.GetOr(t, "size", &a.Size)
	c.GetOr(t, "fill_value", &a.Fill)
	var indices []*selectSpec
	c.GetOr(t, "indices", &indices)
	for k, s := range indices {
		if s == nil {
			a.Indices = append(a.Indices, nil)
			continue
		}
		a.Indices = append(a.Indices, selectTensor(t, *s, seed, int64(1+k), on))
	}
	switch null {
	case "self":
		self = nil
	case "mask":
		a.Mask = nil
	case "indices":
		a.NullList = true
	case "ret0":
		a.NullRet = true
	}
	return Select(fn, cuda, self, a)
}

func TestSelectOps(t *testing.T) {
	for _, op := range []string{"nonzero", "nonzero_static", "masked_select", "index"} {
		for _, c := range fx.Cases(t, "select_ops.json", op) {
			t.Run(c.Name, func(t *testing.T) {
				fx.Begin(t, c)
				var device string
				var wantSizes, wantStrides []int64
				var expected []any
				c.Get(t, "device", &device)
				c.Get(t, "expect_sizes", &wantSizes)
				hasStrides := c.GetOr(t, "expect_strides", &wantStrides)
				c.Get(t, "expected", &expected)
				cuda := device == "cuda"
				out, err := selectCall(t, c, op, cuda, cuda, "")
				require.NoError(t, err)
				defer out.Close()
				dtype := "int64"
				if op == "masked_select" || op == "index" {
					c.Get(t, "dtype", &dtype)
				}
				sizes, strides, dt, onCuda, err := out.Meta()
				require.NoError(t, err)
				require.Equal(t, DtypeCode(dtype), dt)
				require.Equal(t, cuda, onCuda)
				require.Equal(t, wantSizes, sizes)
				if hasStrides {
					require.Equal(t, wantStrides, strides, "PyTorch's layout")
				}
				got, _, _, err := out.Values(dtype)
				require.NoError(t, err)
				requireSame(t, "output", got, fixtureNumbers(t, expected))
			})
		}
	}
}

func TestSelectBadInput(t *testing.T) {
	for _, c := range fx.Cases(t, "select_ops.json", "select_error") {
		t.Run(c.Name, func(t *testing.T) {
			fx.Begin(t, c)
			var device, fn, null, expect, message string
			c.Get(t, "device", &device)
			c.Get(t, "fn", &fn)
			c.GetOr(t, "null", &null)
			c.Get(t, "expect", &expect)
			c.Get(t, "message", &message)
			on := device
			c.GetOr(t, "tensors_on", &on)
			out, err := selectCall(t, c, fn, device == "cuda", on == "cuda", null)
			require.Nil(t, out, "a failed call hands nothing out")
			var e *Error
			require.True(t, errors.As(err, &e), "want %s, got %v", expect, err)
			require.Equal(t, codes[expect], e.Code, "%v", err)
			require.True(t, strings.Contains(e.Message, message), "%q does not mention %q", e.Message, message)
		})
	}
}
