// SPDX-License-Identifier: Apache-2.0

package opsfixture

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/slimcuda/slimcuda/go/internal/fixture"
	"github.com/stretchr/testify/require"
)

// testdata/scatter_ops.json through the scatter-family shims, from Go
// (csrc/ops/scatter/scatter_ops_test.cc runs the same cases from C++).

// scatterSpec is one operand of a scatter-family case: stored values, or generated from the
// case's seed (operand number Gen).
type scatterSpec struct {
	Sizes   []int64 `json:"sizes"`
	Strides []int64 `json:"strides"`
	Dtype   string  `json:"dtype"`
	Values  []any   `json:"values"`
	Gen     int64   `json:"gen"`
}

func scatterOperand(t *testing.T, c fixture.Case, s scatterSpec, cuda bool) *Tensor {
	var seed int64
	var caseDtype string
	c.Get(t, "seed", &seed)
	c.Get(t, "dtype", &caseDtype)
	dtype := s.Dtype
	if dtype == "" {
		dtype = caseDtype
	}
	strides := s.Strides
	if strides == nil {
		strides = Contiguous(s.Sizes)
	}
	stored := fixtureNumbers(t, s.Values)
	x, err := NewTensor(s.Sizes, strides, dtype, cuda, func(j int) float64 {
		if s.Values != nil {
			return stored[j]
		}
		v := inputValue(seed, s.Gen, j)
		switch {
		case dtype == "bool":
			if v >= 0 {
				return 1
			}
			return 0
		case dtype == "uint8":
			return 8*v + 8
		case strings.HasPrefix(dtype, "int"):
			return 8 * v
		}
		return v
	})
	require.NoError(t, err)
	t.Cleanup(x.Close)
	return x
}

func caseOperand(t *testing.T, c fixture.Case, key string, cuda bool) *Tensor {
	var s scatterSpec
	c.Get(t, key, &s)
	return scatterOperand(t, c, s, cuda)
}

// scatterOperands: self, index, src (nil without), and out: the case's operand, self itself
// ("self"), or a new zeroed contiguous tensor of self's sizes.
func scatterOperands(t *testing.T, c fixture.Case, cuda bool) (self, index, src, out *Tensor) {
	self = caseOperand(t, c, "self", cuda)
	index = caseOperand(t, c, "index", cuda)
	if c.Has("src") {
		src = caseOperand(t, c, "src", cuda)
	}
	var raw json.RawMessage
	if !c.GetOr(t, "out", &raw) {
		var s scatterSpec
		c.Get(t, "self", &s)
		zeros := make([]any, numel(s.Sizes))
		for i := range zeros {
			zeros[i] = 0.0
		}
		return self, index, src, scatterOperand(t, c, scatterSpec{Sizes: s.Sizes, Values: zeros}, cuda)
	}
	if strings.HasPrefix(string(raw), "\"") { // "self": in place
		return self, index, src, self
	}
	return self, index, src, caseOperand(t, c, "out", cuda)
}

func numel(sizes []int64) int {
	n := 1
	for _, s := range sizes {
		n *= int(s)
	}
	return n
}

func scatterArgs(t *testing.T, c fixture.Case, nullReduce bool) ScatterArgs {
	var a ScatterArgs
	var value any
	var reduce string
	includeSelf := int32(1)
	c.Get(t, "dim", &a.Dim)
	if c.GetOr(t, "value", &value) {
		a.Value = fixtureNumbers(t, []any{value})[0]
	}
	if c.GetOr(t, "reduce", &reduce) && !nullReduce {
		a.Reduce = &reduce
	}
	c.GetOr(t, "include_self", &includeSelf)
	a.IncludeSelf = includeSelf != 0
	return a
}

func indexPutOperands(t *testing.T, c fixture.Case, cuda bool) (self *Tensor, indices []*Tensor, values *Tensor) {
	var specs []*scatterSpec
	c.Get(t, "indices", &specs)
	for _, s := range specs {
		if s == nil {
			indices = append(indices, nil)
			continue
		}
		indices = append(indices, scatterOperand(t, c, *s, cuda))
	}
	return caseOperand(t, c, "self", cuda), indices, caseOperand(t, c, "values", cuda)
}

// expectScatterValues checks a result against the case: sizes, strides where the case has
// them, dtype, device and the elements within the case's tolerance.
func expectScatterValues(t *testing.T, c fixture.Case, got *Tensor) {
	var dtype, device string
	var wantSizes, wantStrides []int64
	var expected []any
	var atol, rtol float64
	c.Get(t, "dtype", &dtype)
	c.Get(t, "device", &device)
	c.Get(t, "expect_sizes", &wantSizes)
	c.Get(t, "expected", &expected)
	c.Get(t, "atol", &atol)
	c.Get(t, "rtol", &rtol)
	_, _, dt, cuda, err := got.Meta()
	require.NoError(t, err)
	require.Equal(t, DtypeCode(dtype), dt)
	require.Equal(t, device == "cuda", cuda)
	vals, sizes, strides, err := got.Values(dtype)
	require.NoError(t, err)
	if len(wantSizes) == 0 {
		wantSizes = nil
	}
	require.Equal(t, wantSizes, sizes)
	if c.GetOr(t, "expect_strides", &wantStrides) {
		if len(wantStrides) == 0 {
			wantStrides = nil
		}
		require.Equal(t, wantStrides, strides, "the output's layout (ATen's meta function's)")
	}
	want := fixtureNumbers(t, expected)
	require.Len(t, vals, len(want))
	for i := range want {
		ok := vals[i] == want[i] || math.Abs(vals[i]-want[i]) <= atol+rtol*math.Abs(want[i])
		if math.IsNaN(want[i]) {
			ok = math.IsNaN(vals[i])
		}
		if !ok {
			t.Fatalf("element %d = %v, want %v", i, vals[i], want[i])
		}
	}
}

func TestScatter(t *testing.T) {
	for _, c := range fx.Cases(t, "scatter_ops.json", "scatter") {
		t.Run(c.Name, func(t *testing.T) {
			fx.Begin(t, c)
			var fn, device string
			c.Get(t, "fn", &fn)
			c.Get(t, "device", &device)
			cuda := device == "cuda"
			self, index, src, out := scatterOperands(t, c, cuda)
			require.NoError(t, Scatter(fn, cuda, out, self, index, src, scatterArgs(t, c, false)))
			expectScatterValues(t, c, out)
		})
	}
}

func TestIndexPut(t *testing.T) {
	for _, c := range fx.Cases(t, "scatter_ops.json", "index_put") {
		t.Run(c.Name, func(t *testing.T) {
			fx.Begin(t, c)
			var device string
			var accumulate int32
			c.Get(t, "device", &device)
			c.Get(t, "accumulate", &accumulate)
			cuda := device == "cuda"
			self, indices, values := indexPutOperands(t, c, cuda)
			out, err := IndexPut(cuda, self, indices, values, accumulate != 0, false)
			require.NoError(t, err)
			defer out.Close()
			expectScatterValues(t, c, out)
		})
	}
}

func TestMaskedScatter(t *testing.T) {
	for _, c := range fx.Cases(t, "scatter_ops.json", "masked_scatter") {
		t.Run(c.Name, func(t *testing.T) {
			fx.Begin(t, c)
			var device string
			c.Get(t, "device", &device)
			cuda := device == "cuda"
			out, err := MaskedScatter(cuda, caseOperand(t, c, "self", cuda), caseOperand(t, c, "mask", cuda),
				caseOperand(t, c, "source", cuda), false)
			require.NoError(t, err)
			defer out.Close()
			expectScatterValues(t, c, out)
		})
	}
}

// Bad input: the code and message, nothing handed out, a scatter's out untouched.
func TestScatterFamilyBadInput(t *testing.T) {
	for _, op := range []string{"scatter_error", "index_put_error", "masked_scatter_error"} {
		for _, c := range fx.Cases(t, "scatter_ops.json", op) {
			t.Run(c.Name, func(t *testing.T) {
				fx.Begin(t, c)
				var device, null, expect, message string
				c.Get(t, "device", &device)
				c.GetOr(t, "null", &null)
				c.Get(t, "expect", &expect)
				c.Get(t, "message", &message)
				on := device
				c.GetOr(t, "tensors_on", &on)
				cuda, onCuda := device == "cuda", on == "cuda"
				pick := func(what string, x *Tensor) *Tensor {
					if null == what {
						return nil
					}
					return x
				}
				var err error
				switch op {
				case "scatter_error":
					var fn, dtype string
					c.Get(t, "fn", &fn)
					c.Get(t, "dtype", &dtype)
					self, index, src, out := scatterOperands(t, c, onCuda)
					before, _, _, verr := out.Values(dtype)
					require.NoError(t, verr)
					err = Scatter(fn, cuda, pick("out", out), pick("self", self), pick("index", index), pick("src", src),
						scatterArgs(t, c, null == "reduce"))
					after, _, _, verr := out.Values(dtype)
					require.NoError(t, verr)
					require.Equal(t, before, after, "a refused scatter wrote into out")
				case "index_put_error":
					var accumulate int32
					c.Get(t, "accumulate", &accumulate)
					self, indices, values := indexPutOperands(t, c, onCuda)
					var r *Tensor
					r, err = IndexPut(cuda, pick("self", self), indices, pick("values", values), accumulate != 0,
						null == "ret0")
					require.Nil(t, r)
				default:
					var r *Tensor
					r, err = MaskedScatter(cuda, pick("self", caseOperand(t, c, "self", onCuda)),
						pick("mask", caseOperand(t, c, "mask", onCuda)),
						pick("source", caseOperand(t, c, "source", onCuda)), null == "ret0")
					require.Nil(t, r)
				}
				requireCode(t, err, expect, message)
			})
		}
	}
}

// requireCode checks a shim's error against the case's expected code and message fragment.
func requireCode(t *testing.T, err error, expect, message string) {
	t.Helper()
	want, ok := codes[expect]
	require.True(t, ok, "unknown error name %q", expect)
	var e *Error
	require.True(t, errors.As(err, &e), "want %s, got %v", expect, err)
	require.Equal(t, want, e.Code, "%v", err)
	require.True(t, strings.Contains(e.Message, message), "%q does not mention %q", e.Message, message)
}
