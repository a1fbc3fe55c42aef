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
	fx = fixture.NewSuite(DeviceCount(), "ops.json", "scatter_ops.json", "select_ops.json")
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
	Offset  int64   `json:"offset"` // storage offset (elements) of the view
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
		tensor, err := NewTensorAt(s.Sizes, strides, s.Offset, dtype, cuda, func(j int) float64 {
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
			fx.Begin(t, c)
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
					Offset  int64   `json:"offset"`
				}
				hasOut := c.GetOr(t, "out", &o)
				if hasOut && o.Strides != nil {
					strides = o.Strides
				}
				var err error
				out, err = NewTensorAt(sizes, strides, o.Offset, dtype, cuda, func(int) float64 { return -7 })
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
			fx.Begin(t, c)
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
			fx.Begin(t, c)
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

type attentionSpec struct {
	Sizes      []int64 `json:"sizes"`
	Strides    []int64 `json:"strides"`
	Dtype      string  `json:"dtype"`
	MaskedRows []int64 `json:"masked_rows"`
}

// attentionInputs makes a case's query, key, value (and bias) as make_op_fixtures.py says.
func attentionInputs(t *testing.T, c fixture.Case, dtype string, cuda bool) []*Tensor {
	var seed int64
	var specs []attentionSpec
	c.Get(t, "seed", &seed)
	c.Get(t, "inputs", &specs)
	var out []*Tensor
	for i, s := range specs {
		strides := s.Strides
		if strides == nil {
			strides = Contiguous(s.Sizes)
		}
		dt := dtype
		if s.Dtype != "" {
			dt = s.Dtype
		}
		isBool := s.Dtype == "bool"
		rows, cols := s.Sizes[len(s.Sizes)-2], s.Sizes[len(s.Sizes)-1]
		idx := int64(i)
		masked := s.MaskedRows
		tensor, err := NewTensor(s.Sizes, strides, dt, cuda, func(j int) float64 {
			for _, r := range masked {
				if (int64(j)/cols)%rows == r {
					if isBool {
						return 0
					}
					return math.Inf(-1)
				}
			}
			v := inputValue(seed, idx, j)
			if isBool {
				if v >= -0.5 {
					return 1
				}
				return 0
			}
			return v
		})
		require.NoError(t, err)
		t.Cleanup(tensor.Close)
		out = append(out, tensor)
	}
	return out
}

// requireRngPlaceholder: PyTorch's philox seed/offset for inference, CPU int64 zeros.
func requireRngPlaceholder(t *testing.T, x *Tensor, sizes []int64, what string) {
	require.NotNil(t, x, what)
	got, _, dt, cuda, err := x.Meta()
	require.NoError(t, err)
	require.Equal(t, sizes, got, what)
	require.Equal(t, DtypeCode("int64"), dt, what)
	require.False(t, cuda, what)
	vals, _, _, err := x.Values("int64")
	require.NoError(t, err)
	for _, v := range vals {
		require.Zero(t, v, what)
	}
}

func TestAttention(t *testing.T) {
	all := fx.Cases(t, "ops.json", "attention")
	byName := map[string]fixture.Case{}
	for _, c := range all {
		byName[c.Name] = c
	}
	for _, c := range all {
		t.Run(c.Name, func(t *testing.T) {
			fx.Begin(t, c)
			dtype, cuda := valueCase(t, c)
			in := attentionInputs(t, c, dtype, cuda)
			var fn string
			c.Get(t, "fn", &fn)
			o := AttentionOptions{ComputeLogSumExp: true}
			c.GetOr(t, "is_causal", &o.IsCausal)
			c.GetOr(t, "compute_log_sumexp", &o.ComputeLogSumExp)
			if c.Has("scale") {
				var s float64
				c.Get(t, "scale", &s)
				o.Scale = &s
			}
			var bias *Tensor
			if len(in) > 3 {
				bias = in[3]
			}
			r, err := Attention(fn, in[0], in[1], in[2], bias, o)
			require.NoError(t, err)
			defer r.Close()
			values := c
			var from string
			if c.GetOr(t, "expected_from", &from) {
				var ok bool
				values, ok = byName[from]
				require.True(t, ok, "expected_from %q is not a case", from)
			}
			out := r.Outputs[0]
			require.NotNil(t, out)
			sizes, strides, _, onCuda, err := out.Meta()
			require.NoError(t, err)
			var wantStrides []int64
			c.Get(t, "expect_strides", &wantStrides)
			require.Equal(t, wantStrides, strides, "output strides")
			require.Equal(t, cuda, onCuda)
			// Values of the scenario's case, sizes and tolerances of this one.
			var want []float64
			values.Get(t, "expected", &want)
			var wantSizes []int64
			var atol, rtol float64
			c.Get(t, "expect_sizes", &wantSizes)
			c.Get(t, "atol", &atol)
			c.Get(t, "rtol", &rtol)
			require.Equal(t, wantSizes, sizes)
			vals, _, _, err := out.Values(dtype)
			require.NoError(t, err)
			require.Len(t, vals, len(want))
			for i := range want {
				if !(math.Abs(vals[i]-want[i]) <= atol+rtol*math.Abs(want[i])) {
					t.Fatalf("element %d = %v, want %v", i, vals[i], want[i])
				}
			}

			lse := r.Outputs[1]
			require.NotNil(t, lse)
			lseSizes, lseStrides, lseType, _, err := lse.Meta()
			require.NoError(t, err)
			var wantLseSizes, wantLseStrides []int64
			c.Get(t, "lse_sizes", &wantLseSizes)
			c.Get(t, "lse_strides", &wantLseStrides)
			require.Equal(t, wantLseSizes, lseSizes)
			require.Equal(t, wantLseStrides, lseStrides)
			require.Equal(t, DtypeCode("float32"), lseType)
			if o.ComputeLogSumExp {
				var wantLse []float64
				values.Get(t, "lse_expected", &wantLse)
				got, _, _, err := lse.Values("float32")
				require.NoError(t, err)
				sq, row := sizes[2], lseSizes[2]
				require.Equal(t, int(sizes[0]*sizes[1]*sq), len(wantLse))
				for i, w := range wantLse {
					g := got[int64(i)/sq*row+int64(i)%sq]
					if !(math.Abs(g-w) <= atol+rtol*math.Abs(w)) {
						t.Fatalf("logsumexp %d = %v, want %v", i, g, w)
					}
				}
			}

			kSizes, _, _, _, err := in[1].Meta()
			require.NoError(t, err)
			switch fn {
			case "efficient", "cudnn":
				requireRngPlaceholder(t, r.Outputs[6], []int64{}, "philox seed")
				requireRngPlaceholder(t, r.Outputs[7], []int64{}, "philox offset")
			case "flash":
				requireRngPlaceholder(t, r.Outputs[6], []int64{2}, "rng_state")
				requireRngPlaceholder(t, r.Outputs[7], []int64{}, "unused")
				require.NotNil(t, r.Outputs[8], "debug mask")
				dm, _, dt, _, err := r.Outputs[8].Meta()
				require.NoError(t, err)
				require.Equal(t, []int64{0}, dm)
				require.Equal(t, DtypeCode(dtype), dt)
			}
			if fn == "flash" || fn == "cudnn" {
				require.Nil(t, r.Outputs[2], "cum_seq_q")
				require.Nil(t, r.Outputs[3], "cum_seq_k")
				require.Equal(t, sizes[2], r.MaxQ)
				require.Equal(t, kSizes[2], r.MaxK)
			}
			if fn == "cudnn" {
				require.Nil(t, r.Outputs[8], "cudnn's debug mask is None")
			}
		})
	}
}

func TestAttentionBadInput(t *testing.T) {
	for _, c := range fx.Cases(t, "ops.json", "attention_error") {
		t.Run(c.Name, func(t *testing.T) {
			fx.Begin(t, c)
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
					func(int) float64 { return 0.5 })
				require.NoError(t, err)
				defer tensor.Close()
				ts = append(ts, tensor)
			}
			for i, n := range []string{"query", "key", "value"} {
				if n == null {
					ts[i] = nil
				}
			}
			var bias *Tensor
			if len(ts) > 3 {
				bias = ts[3]
			}
			o := AttentionOptions{ComputeLogSumExp: true, NullRet0: null == "ret0"}
			c.GetOr(t, "dropout_p", &o.DropoutP)
			var debug int32
			c.GetOr(t, "return_debug_mask", &debug)
			o.ReturnDebugMask = debug != 0
			r, err := Attention(fn, ts[0], ts[1], ts[2], bias, o)
			r.Close()
			want, ok := codes[expect]
			require.True(t, ok, "unknown error name %q", expect)
			var e *Error
			require.True(t, errors.As(err, &e), "want %s, got %v", expect, err)
			require.Equal(t, want, e.Code, "%v", err)
			require.True(t, strings.Contains(e.Message, message), "%q does not mention %q", e.Message, message)
		})
	}
}

func TestCumulative(t *testing.T) {
	for _, c := range fx.Cases(t, "ops.json", "cumulative") {
		t.Run(c.Name, func(t *testing.T) {
			fx.Begin(t, c)
			var fn, dtype, outDtype, wantDtype string
			var sizes, strides []int64
			var values []float64
			var dim int64
			c.Get(t, "fn", &fn)
			c.Get(t, "dtype", &dtype)
			c.Get(t, "sizes", &sizes)
			c.Get(t, "input_values", &values)
			c.Get(t, "dim", &dim)
			c.Get(t, "expect_dtype", &wantDtype)
			c.GetOr(t, "strides", &strides)
			c.GetOr(t, "out_dtype", &outDtype)
			if strides == nil {
				strides = Contiguous(sizes)
			}
			in, err := NewTensor(sizes, strides, dtype, false, func(j int) float64 { return values[j] })
			require.NoError(t, err)
			defer in.Close()
			out, err := Cumulative(fn, in, dim, outDtype, nil, false)
			require.NoError(t, err)
			defer out.Close()
			_, _, got, _, err := out.Meta()
			require.NoError(t, err)
			require.Equal(t, DtypeCode(wantDtype), got, "result dtype")
			expectValues(t, c, out, wantDtype)
		})
	}
}

func TestCumulativeBadInput(t *testing.T) {
	for _, c := range fx.Cases(t, "ops.json", "cumulative_error") {
		t.Run(c.Name, func(t *testing.T) {
			fx.Begin(t, c)
			var fn, dtype, null, expect, message string
			var sizes []int64
			var dim int64
			var code *int32
			c.Get(t, "fn", &fn)
			c.Get(t, "dtype", &dtype)
			c.Get(t, "sizes", &sizes)
			c.Get(t, "dim", &dim)
			c.Get(t, "expect", &expect)
			c.Get(t, "message", &message)
			c.GetOr(t, "null", &null)
			c.GetOr(t, "out_dtype_code", &code)
			in, err := NewTensor(sizes, Contiguous(sizes), dtype, false, func(int) float64 { return 1 })
			require.NoError(t, err)
			defer in.Close()
			self := in
			if null == "self" {
				self = nil
			}
			ret, err := Cumulative(fn, self, dim, "", code, null == "ret0")
			ret.Close()
			var e *Error
			require.True(t, errors.As(err, &e), "want %s, got %v", expect, err)
			require.Equal(t, codes[expect], e.Code, "%v", err)
			require.True(t, strings.Contains(e.Message, message), "%q does not mention %q", e.Message, message)
		})
	}
}

// bagInputs builds an embedding_bag case's weight, indices, offsets and per_sample_weights
// (nil when the case has none) on the CPU or cuda:0; the caller closes them.
func bagInputs(t *testing.T, c fixture.Case, cuda bool) (w, idx, off, psw *Tensor) {
	var dtype, layout, indexDtype, offsetDtype, pswDtype string
	var wSizes, idxSizes, offSizes []int64
	var wVals, idxVals, offVals, pswVals []float64
	c.Get(t, "dtype", &dtype)
	c.Get(t, "weight_sizes", &wSizes)
	c.GetOr(t, "weight_values", &wVals)
	c.GetOr(t, "weight_layout", &layout)
	c.Get(t, "indices", &idxVals)
	c.Get(t, "offsets", &offVals)
	c.Get(t, "index_dtype", &indexDtype)
	c.Get(t, "offset_dtype", &offsetDtype)
	c.GetOr(t, "indices_sizes", &idxSizes)
	c.GetOr(t, "offsets_sizes", &offSizes)
	idxStep, pswStep := int64(1), int64(1)
	c.GetOr(t, "indices_stride", &idxStep)
	c.GetOr(t, "psw_stride", &pswStep)
	hasPsw := c.GetOr(t, "psw_values", &pswVals)
	if !c.GetOr(t, "psw_dtype", &pswDtype) {
		pswDtype = dtype
	}
	strides := Contiguous(wSizes)
	if layout == "transposed" {
		strides = []int64{1, wSizes[0]}
	}
	at := func(v []float64, fill float64) func(int) float64 {
		return func(j int) float64 {
			if j < len(v) {
				return v[j]
			}
			return fill
		}
	}
	vector := func(v []float64, sizes []int64, dt string, step int64) *Tensor {
		strides := Contiguous(sizes)
		if sizes == nil {
			sizes, strides = []int64{int64(len(v))}, []int64{step}
		}
		x, err := NewTensor(sizes, strides, dt, cuda, at(v, 0))
		require.NoError(t, err)
		return x
	}
	w, err := NewTensor(wSizes, strides, dtype, cuda, at(wVals, 0.5))
	require.NoError(t, err)
	idx = vector(idxVals, idxSizes, indexDtype, idxStep)
	off = vector(offVals, offSizes, offsetDtype, 1)
	if hasPsw {
		psw = vector(pswVals, nil, pswDtype, pswStep)
	}
	return w, idx, off, psw
}

func bagOptions(t *testing.T, c fixture.Case) EmbeddingBagOptions {
	var fn string
	var o EmbeddingBagOptions
	var ilo int
	c.Get(t, "fn", &fn)
	c.Get(t, "mode", &o.Mode)
	c.Get(t, "include_last_offset", &ilo)
	c.Get(t, "padding_idx", &o.PaddingIdx)
	o.ForwardOnly, o.IncludeLastOffset = fn == "forward_only", ilo != 0
	return o
}

// expectBagIndices compares one returned index tensor with the case's key and key_sizes exactly.
func expectBagIndices(t *testing.T, c fixture.Case, got *Tensor, key string) {
	var dtype string
	var want []float64
	var wantSizes []int64
	c.Get(t, "expect_index_dtype", &dtype)
	c.Get(t, key, &want)
	c.Get(t, key+"_sizes", &wantSizes)
	require.NotNil(t, got, key)
	_, _, code, _, err := got.Meta()
	require.NoError(t, err)
	require.Equal(t, DtypeCode(dtype), code, "%s dtype", key)
	vals, sizes, _, err := got.Values(dtype)
	require.NoError(t, err)
	require.Equal(t, wantSizes, sizes, "%s sizes", key)
	if len(want) == 0 {
		want = nil
	}
	if len(vals) == 0 {
		vals = nil
	}
	require.Equal(t, want, vals, key)
}

// expectBagOutput compares the output with the case's output and output_sizes (atol/rtol).
func expectBagOutput(t *testing.T, c fixture.Case, got *Tensor, dtype string) {
	vals, sizes, _, err := got.Values(dtype)
	require.NoError(t, err)
	var wantSizes []int64
	var want []float64
	var atol, rtol float64
	c.Get(t, "output_sizes", &wantSizes)
	c.Get(t, "output", &want)
	c.Get(t, "atol", &atol)
	c.Get(t, "rtol", &rtol)
	require.Equal(t, wantSizes, sizes, "output sizes")
	require.Len(t, vals, len(want))
	for i := range want {
		if !(math.Abs(vals[i]-want[i]) <= atol+rtol*math.Abs(want[i])) {
			t.Fatalf("output element %d = %v, want %v", i, vals[i], want[i])
		}
	}
}

func TestEmbeddingBag(t *testing.T) {
	for _, c := range fx.Cases(t, "ops.json", "embedding_bag") {
		t.Run(c.Name, func(t *testing.T) {
			fx.Begin(t, c)
			dtype, cuda := valueCase(t, c)
			w, idx, off, psw := bagInputs(t, c, cuda)
			defer w.Close()
			defer idx.Close()
			defer off.Close()
			defer psw.Close()
			out, err := EmbeddingBag(cuda, w, idx, off, psw, bagOptions(t, c))
			for _, o := range out {
				defer o.Close()
			}
			require.NoError(t, err)
			_, _, code, _, err := out[0].Meta()
			require.NoError(t, err)
			require.Equal(t, DtypeCode(dtype), code, "output dtype")
			expectBagOutput(t, c, out[0], dtype)
			expectBagIndices(t, c, out[1], "offset2bag")
			expectBagIndices(t, c, out[2], "bag_size")
			expectBagIndices(t, c, out[3], "max_indices")
		})
	}
}

func TestEmbeddingBagBadInput(t *testing.T) {
	for _, c := range fx.Cases(t, "ops.json", "embedding_bag_error") {
		t.Run(c.Name, func(t *testing.T) {
			fx.Begin(t, c)
			var device, on, null, expect, message string
			c.Get(t, "device", &device)
			c.Get(t, "expect", &expect)
			c.Get(t, "message", &message)
			c.GetOr(t, "null", &null)
			if !c.GetOr(t, "tensors_on", &on) {
				on = device
			}
			w, idx, off, psw := bagInputs(t, c, on == "cuda")
			defer w.Close()
			defer idx.Close()
			defer off.Close()
			defer psw.Close()
			o := bagOptions(t, c)
			for i := range o.NullRet {
				o.NullRet[i] = null == fmt.Sprintf("ret%d", i)
			}
			args := map[string]*Tensor{"weight": w, "indices": idx, "offsets": off}
			if _, ok := args[null]; ok {
				args[null] = nil
			}
			out, err := EmbeddingBag(device == "cuda", args["weight"], args["indices"], args["offsets"], psw, o)
			for _, x := range out {
				require.Nil(t, x, "nothing is handed out on failure")
			}
			var e *Error
			require.True(t, errors.As(err, &e), "want %s, got %v", expect, err)
			require.Equal(t, codes[expect], e.Code, "%v", err)
			require.True(t, strings.Contains(e.Message, message), "%q does not mention %q", e.Message, message)
		})
	}
}

// --- sorting and searching: sort / sort_stable, topk, histc, searchsorted, bucketize -------

// fixtureNumbers decodes a list of JSON numbers and "nan" / "inf" / "-inf".
func fixtureNumbers(t *testing.T, raw []any) []float64 {
	out := make([]float64, len(raw))
	for i, v := range raw {
		switch x := v.(type) {
		case float64:
			out[i] = x
		case string:
			switch x {
			case "nan":
				out[i] = math.NaN()
			case "inf":
				out[i] = math.Inf(1)
			case "-inf":
				out[i] = math.Inf(-1)
			default:
				t.Fatalf("bad fixture number %q", x)
			}
		default:
			t.Fatalf("bad fixture number %v", v)
		}
	}
	return out
}

// familySpec is one tensor of a sort-family case.
type familySpec struct {
	Dtype   string  `json:"dtype"`
	Sizes   []int64 `json:"sizes"`
	Strides []int64 `json:"strides"`
	Values  []any   `json:"values"`
}

// familyTensor makes spec's tensor (its values row-major, or fill everywhere).
func familyTensor(t *testing.T, s familySpec, cuda bool, fill float64) *Tensor {
	strides := s.Strides
	if strides == nil {
		strides = Contiguous(s.Sizes)
	}
	vals := fixtureNumbers(t, s.Values)
	x, err := NewTensor(s.Sizes, strides, s.Dtype, cuda, func(j int) float64 {
		if len(vals) == 0 {
			return fill
		}
		return vals[j]
	})
	require.NoError(t, err)
	t.Cleanup(x.Close)
	return x
}

// caseTensor is the case's own input: dtype, sizes, strides, input_values (fill without).
func caseTensor(t *testing.T, c fixture.Case, cuda bool, fill float64) *Tensor {
	var s familySpec
	c.Get(t, "dtype", &s.Dtype)
	c.Get(t, "sizes", &s.Sizes)
	c.GetOr(t, "strides", &s.Strides)
	c.GetOr(t, "input_values", &s.Values)
	return familyTensor(t, s, cuda, fill)
}

func requireSame(t *testing.T, what string, got, want []float64) {
	require.Len(t, got, len(want), what)
	for i := range want {
		if !(got[i] == want[i] || (math.IsNaN(got[i]) && math.IsNaN(want[i]))) {
			t.Fatalf("%s element %d = %v, want %v", what, i, got[i], want[i])
		}
	}
}

func sortArgs(t *testing.T, c fixture.Case) SortArgs {
	var a SortArgs
	var descending, largest, sorted int32 = 0, 1, 1
	c.Get(t, "dim", &a.Dim)
	c.GetOr(t, "descending", &descending)
	c.GetOr(t, "k", &a.K)
	c.GetOr(t, "largest", &largest)
	c.GetOr(t, "sorted", &sorted)
	a.Descending, a.Largest, a.Sorted = descending != 0, largest != 0, sorted != 0
	return a
}

func histcArgs(t *testing.T, c fixture.Case) (bins int64, lo, hi float64) {
	var raw []any
	var b any
	c.Get(t, "bins", &bins)
	c.Get(t, "min", &b)
	raw = append(raw, b)
	c.Get(t, "max", &b)
	raw = append(raw, b)
	r := fixtureNumbers(t, raw)
	return bins, r[0], r[1]
}

// searchCall runs a searchsorted-family case with its tensors made on `on`.
func searchCall(t *testing.T, c fixture.Case, cuda bool, on string, null string, sorterValues bool) (*Tensor, error) {
	var fn string
	var seqSpec familySpec
	var selfSpec *familySpec
	var outInt32, right int32
	var scalar float64
	var side *string
	c.Get(t, "fn", &fn)
	c.Get(t, "seq", &seqSpec)
	c.GetOr(t, "self", &selfSpec)
	c.GetOr(t, "out_int32", &outInt32)
	c.GetOr(t, "right", &right)
	c.GetOr(t, "scalar", &scalar)
	c.GetOr(t, "side", &side)
	seq := familyTensor(t, seqSpec, on == "cuda", 0)
	var self, sorter *Tensor
	if selfSpec != nil {
		self = familyTensor(t, *selfSpec, on == "cuda", 0)
	}
	if sorterValues { // a value case: int64 positions of seq's shape
		var vals []any
		if c.GetOr(t, "sorter", &vals) {
			sorter = familyTensor(t, familySpec{Dtype: "int64", Sizes: seqSpec.Sizes, Values: vals}, on == "cuda", 0)
		}
	} else {
		var spec *familySpec
		if c.GetOr(t, "sorter", &spec) && spec != nil {
			sorter = familyTensor(t, *spec, on == "cuda", 0)
		}
	}
	if null == "seq" {
		seq = nil
	}
	if null == "self" {
		self = nil
	}
	return Search(fn, cuda, seq, self, scalar, outInt32 != 0, right != 0, side, sorter)
}

func TestSort(t *testing.T) {
	for _, c := range fx.Cases(t, "ops.json", "sort") {
		t.Run(c.Name, func(t *testing.T) {
			fx.Begin(t, c)
			dtype, cuda := valueCase(t, c)
			var fn string
			var wantSizes, wantStrides []int64
			var expected []any
			var wantIdx []float64
			c.Get(t, "fn", &fn)
			c.Get(t, "expect_sizes", &wantSizes)
			c.GetOr(t, "expect_strides", &wantStrides)
			c.Get(t, "expected", &expected)
			c.Get(t, "expected_indices", &wantIdx)
			if wantStrides == nil {
				wantStrides = Contiguous(wantSizes)
			}
			values, indices, err := Sort(fn, cuda, caseTensor(t, c, cuda, 0), sortArgs(t, c))
			require.NoError(t, err)
			defer values.Close()
			defer indices.Close()
			_, _, vt, _, err := values.Meta()
			require.NoError(t, err)
			require.Equal(t, DtypeCode(dtype), vt)
			_, _, it, _, err := indices.Meta()
			require.NoError(t, err)
			require.Equal(t, DtypeCode("int64"), it)
			got, sizes, strides, err := values.Values(dtype)
			require.NoError(t, err)
			if len(wantSizes) == 0 {
				wantSizes, wantStrides = nil, nil
			}
			require.Equal(t, wantSizes, sizes)
			require.Equal(t, wantStrides, strides, "values' strides (ATen's meta)")
			requireSame(t, "values", got, fixtureNumbers(t, expected))
			gotIdx, _, idxStrides, err := indices.Values("int64")
			require.NoError(t, err)
			require.Equal(t, wantStrides, idxStrides, "indices' strides")
			requireSame(t, "indices", gotIdx, wantIdx)
		})
	}
}

func TestHistc(t *testing.T) {
	for _, c := range fx.Cases(t, "ops.json", "histc") {
		t.Run(c.Name, func(t *testing.T) {
			fx.Begin(t, c)
			dtype, cuda := valueCase(t, c)
			var want []float64
			var wantSizes []int64
			c.Get(t, "expected", &want)
			c.Get(t, "expect_sizes", &wantSizes)
			bins, lo, hi := histcArgs(t, c)
			out, err := Histc(cuda, caseTensor(t, c, cuda, 0), bins, lo, hi, false)
			require.NoError(t, err)
			defer out.Close()
			_, _, dt, _, err := out.Meta()
			require.NoError(t, err)
			require.Equal(t, DtypeCode(dtype), dt)
			got, sizes, _, err := out.Values(dtype)
			require.NoError(t, err)
			require.Equal(t, wantSizes, sizes)
			requireSame(t, "counts", got, want)
		})
	}
}

func TestSearchsorted(t *testing.T) {
	for _, c := range fx.Cases(t, "ops.json", "searchsorted") {
		t.Run(c.Name, func(t *testing.T) {
			fx.Begin(t, c)
			var device, wantDtype string
			var want []float64
			var wantSizes []int64
			c.Get(t, "device", &device)
			c.Get(t, "expect_dtype", &wantDtype)
			c.Get(t, "expected", &want)
			c.Get(t, "expect_sizes", &wantSizes)
			out, err := searchCall(t, c, device == "cuda", device, "", true)
			require.NoError(t, err)
			defer out.Close()
			_, _, dt, _, err := out.Meta()
			require.NoError(t, err)
			require.Equal(t, DtypeCode(wantDtype), dt)
			got, sizes, _, err := out.Values(wantDtype)
			require.NoError(t, err)
			if len(wantSizes) == 0 {
				wantSizes = nil
			}
			require.Equal(t, wantSizes, sizes)
			requireSame(t, "positions", got, want)
		})
	}
}

func TestSortFamilyBadInput(t *testing.T) {
	for _, op := range []string{"sort_error", "histc_error", "searchsorted_error"} {
		for _, c := range fx.Cases(t, "ops.json", op) {
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
				cuda := device == "cuda"
				var err error
				switch op {
				case "searchsorted_error":
					var out *Tensor
					out, err = searchCall(t, c, cuda, on, null, false)
					out.Close()
				case "histc_error":
					self := caseTensor(t, c, on == "cuda", 1)
					if null == "self" {
						self = nil
					}
					bins, lo, hi := histcArgs(t, c)
					var out *Tensor
					out, err = Histc(cuda, self, bins, lo, hi, null == "ret0")
					out.Close()
				default:
					self := caseTensor(t, c, on == "cuda", 1)
					if null == "self" {
						self = nil
					}
					a := sortArgs(t, c)
					a.NoRet0, a.NoRet1 = null == "ret0", null == "ret1"
					var v, i *Tensor
					v, i, err = Sort(fn, cuda, self, a)
					v.Close()
					i.Close()
				}
				var e *Error
				require.True(t, errors.As(err, &e), "want %s, got %v", expect, err)
				require.Equal(t, codes[expect], e.Code, "%v", err)
				require.True(t, strings.Contains(e.Message, message), "%q does not mention %q", e.Message, message)
			})
		}
	}
}
