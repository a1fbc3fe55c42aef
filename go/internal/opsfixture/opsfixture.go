// SPDX-License-Identifier: Apache-2.0

// Package opsfixture runs the ATen fallback ops of libslimcuda.so (aoti_torch_cpu_* and
// aoti_torch_cuda_*) from Go, for the Go half of the shared op fixtures (testdata/ops.json,
// opsfixture_test.go; testdata/scatter_ops.json, scatter_test.go). Go test files cannot use
// cgo, so the calls live here. Test-only.
package opsfixture

// #include "ops.h"
import "C"

import (
	"fmt"
	"unsafe"
)

// Error is a failed shim call: its code and this thread's message.
type Error struct {
	Code    int32
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("code %#x: %s", e.Code, e.Message) }

func check(r C.of_result) error {
	if r.code == 0 {
		return nil
	}
	msg := ""
	if r.msg != nil {
		msg = C.GoString(r.msg)
		C.free(unsafe.Pointer(r.msg))
	}
	return &Error{Code: int32(r.code), Message: msg}
}

// Dtypes by fixture name.
var dtypes = map[string]C.int{"float32": 0, "float16": 1, "bfloat16": 2, "float64": 3, "bool": 4, "int64": 5, "int32": 6,
	"int16": 7, "int8": 8, "uint8": 9}

// Tensor owns one AtenTensorHandle.
type Tensor struct{ h C.AtenTensorHandle }

// Close deletes the handle; idempotent.
func (t *Tensor) Close() {
	if t != nil && t.h != nil {
		C.of_delete(t.h)
		t.h = nil
	}
}

func (t *Tensor) handle() C.AtenTensorHandle {
	if t == nil {
		return nil
	}
	return t.h
}

func elementSize(dtype string) int {
	switch dtype {
	case "float32", "int32":
		return 4
	case "float64", "int64":
		return 8
	case "bool", "int8", "uint8":
		return 1
	}
	return 2
}

// forEach calls f(j, offset) for every element: j in row-major order, offset in elements.
func forEach(sizes, strides []int64, f func(j int, off int64)) {
	n := 1
	for _, s := range sizes {
		n *= int(s)
	}
	idx := make([]int64, len(sizes))
	for j := 0; j < n; j++ {
		var off int64
		for d := range sizes {
			off += idx[d] * strides[d]
		}
		f(j, off)
		for d := len(sizes) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < sizes[d] {
				break
			}
			idx[d] = 0
		}
	}
}

// Contiguous returns row-major strides for sizes.
func Contiguous(sizes []int64) []int64 {
	s := make([]int64, len(sizes))
	acc := int64(1)
	for d := len(sizes) - 1; d >= 0; d-- {
		s[d] = acc
		if sizes[d] > 1 {
			acc *= sizes[d]
		}
	}
	return s
}

func ptr(v []int64) *C.int64_t {
	if len(v) == 0 {
		return nil
	}
	return (*C.int64_t)(unsafe.Pointer(&v[0]))
}

// NewTensor makes a tensor on the CPU or cuda:0 with these sizes and strides, its storage
// zero-filled and element j (row-major) set to value(j).
func NewTensor(sizes, strides []int64, dtype string, cuda bool, value func(j int) float64) (*Tensor, error) {
	code, ok := dtypes[dtype]
	if !ok {
		return nil, fmt.Errorf("unknown dtype %q", dtype)
	}
	dt := C.of_dtype(code)
	var h C.AtenTensorHandle
	var data unsafe.Pointer
	var nbytes C.int64_t
	if err := check(C.of_empty(C.int64_t(len(sizes)), ptr(sizes), ptr(strides), dt, 0, &h, &data, &nbytes)); err != nil {
		return nil, err
	}
	host := &Tensor{h}
	if nbytes > 0 {
		buf := unsafe.Slice((*byte)(data), int(nbytes))
		for i := range buf {
			buf[i] = 0
		}
		es := elementSize(dtype)
		forEach(sizes, strides, func(j int, off int64) { store(buf[off*int64(es):], dtype, value(j)) })
	}
	if !cuda {
		return host, nil
	}
	defer host.Close()
	// The whole storage goes to the GPU as one flat copy and the view is made there: a copy
	// into the view itself is refused when it overlaps (a stride 0, as an expanded attention
	// bias has), and the flat copy keeps every stored element where it was.
	flat := []int64{int64(nbytes) / int64(elementSize(dtype))}
	one := []int64{1}
	var hf C.AtenTensorHandle
	if err := check(C.of_reinterpret(h, 1, ptr(flat), ptr(one), &hf)); err != nil {
		return nil, err
	}
	hostFlat := &Tensor{hf}
	defer hostFlat.Close()
	var d C.AtenTensorHandle
	if err := check(C.of_empty(1, ptr(flat), ptr(one), dt, 1, &d, &data, &nbytes)); err != nil {
		return nil, err
	}
	dev := &Tensor{d}
	defer dev.Close()
	if err := check(C.of_copy(d, hf)); err != nil {
		return nil, err
	}
	var view C.AtenTensorHandle
	if err := check(C.of_reinterpret(d, C.int64_t(len(sizes)), ptr(sizes), ptr(strides), &view)); err != nil {
		return nil, err
	}
	return &Tensor{view}, nil
}

// NewTensorAt is NewTensor for a view at storage offset `offset` (elements) of a flat
// storage whose first `offset` elements are zeros: an operand as generated code passes it
// (an LSTM step's hidden state inside the sequence buffer, a slice of a bigger buffer).
func NewTensorAt(sizes, strides []int64, offset int64, dtype string, cuda bool, value func(j int) float64) (*Tensor, error) {
	if offset == 0 {
		return NewTensor(sizes, strides, dtype, cuda, value)
	}
	span := int64(1)
	for _, s := range sizes {
		if s == 0 {
			span = 0
		}
	}
	if span != 0 {
		for d := range sizes {
			span += (sizes[d] - 1) * strides[d]
		}
	}
	vals := make(map[int64]float64)
	forEach(sizes, strides, func(j int, off int64) { vals[offset+off] = value(j) })
	flat, err := NewTensor([]int64{offset + span}, []int64{1}, dtype, cuda, func(j int) float64 { return vals[int64(j)] })
	if err != nil {
		return nil, err
	}
	defer flat.Close()
	var view C.AtenTensorHandle
	if err := check(C.of_reinterpret_at(flat.h, C.int64_t(len(sizes)), ptr(sizes), ptr(strides), C.int64_t(offset), &view)); err != nil {
		return nil, err
	}
	return &Tensor{view}, nil
}

// Values reads t back (through a CPU copy for a CUDA tensor): its elements in row-major
// order as float64, and its sizes and strides.
func (t *Tensor) Values(dtype string) (vals []float64, sizes, strides []int64, err error) {
	var nd C.int64_t
	var sz, st *C.int64_t
	var dt, devType C.int32_t
	if err := check(C.of_meta(t.h, &nd, &sz, &st, &dt, &devType)); err != nil {
		return nil, nil, nil, err
	}
	for i := 0; i < int(nd); i++ {
		sizes = append(sizes, int64(*(*C.int64_t)(unsafe.Add(unsafe.Pointer(sz), i*8))))
		strides = append(strides, int64(*(*C.int64_t)(unsafe.Add(unsafe.Pointer(st), i*8))))
	}
	src := t.h
	if devType == C.of_is_cuda() {
		var h C.AtenTensorHandle
		var data unsafe.Pointer
		var nbytes C.int64_t
		if err := check(C.of_empty(nd, ptr(sizes), ptr(strides), dt, 0, &h, &data, &nbytes)); err != nil {
			return nil, nil, nil, err
		}
		host := &Tensor{h}
		defer host.Close()
		if err := check(C.of_copy(h, t.h)); err != nil {
			return nil, nil, nil, err
		}
		src = h
	}
	var data unsafe.Pointer
	if err := check(C.of_data(src, &data)); err != nil {
		return nil, nil, nil, err
	}
	es := int64(elementSize(dtype))
	forEach(sizes, strides, func(_ int, off int64) {
		vals = append(vals, load(unsafe.Slice((*byte)(unsafe.Add(data, off*es)), es), dtype))
	})
	return vals, sizes, strides, nil
}

var gemmFns = map[string]C.int{"mm": C.OF_MM, "addmm": C.OF_ADDMM, "bmm": C.OF_BMM, "baddbmm": C.OF_BADDBMM,
	"addmm_activation": C.OF_ADDMM_ACTIVATION}

func b2i(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// Gemm calls aoti_torch_<cpu|cuda>_<fn>: out is nil for addmm_activation, which returns
// its new tensor; in holds the shim's tensor arguments after out, in order (nil entries
// pass NULL).
func Gemm(fn string, cuda bool, out *Tensor, in []*Tensor, beta, alpha float64, useGelu int32) (*Tensor, error) {
	f, ok := gemmFns[fn]
	if !ok {
		return nil, fmt.Errorf("unknown gemm fn %q", fn)
	}
	var h [3]C.AtenTensorHandle
	for i := 0; i < len(in) && i < 3; i++ {
		h[i] = in[i].handle()
	}
	var ret C.AtenTensorHandle
	if err := check(C.of_gemm(f, b2i(cuda), out.handle(), h[0], h[1], h[2], C.double(beta), C.double(alpha),
		C.int32_t(useGelu), &ret)); err != nil {
		return nil, err
	}
	if ret != nil {
		return &Tensor{ret}, nil
	}
	return nil, nil
}

// Convolution calls aoti_torch_<cpu|cuda>_convolution; bias may be nil. The four lists
// have one entry per spatial dimension.
func Convolution(cuda bool, input, weight, bias *Tensor, stride, padding, dilation, outputPadding []int64,
	transposed bool, groups int64) (*Tensor, error) {
	n := len(stride)
	if len(padding) != n || len(dilation) != n || len(outputPadding) != n {
		return nil, fmt.Errorf("option lists of different lengths")
	}
	lists := append(append(append(append([]int64{}, stride...), padding...), dilation...), outputPadding...)
	lists = append(lists, 0) // never empty
	var ret C.AtenTensorHandle
	var tr C.int32_t
	if transposed {
		tr = 1
	}
	if err := check(C.of_conv(b2i(cuda), input.handle(), weight.handle(), bias.handle(), ptr(lists), C.int64_t(n), tr,
		C.int64_t(groups), &ret)); err != nil {
		return nil, err
	}
	return &Tensor{ret}, nil
}

// Cumulative calls aoti_torch_cpu_<fn> (cumsum or cumprod) of self along dim; dtype ""
// passes NULL, else the dtype by fixture name, or code (when non-nil) a raw dtype code.
// self nil passes NULL; noRet passes a NULL ret0.
func Cumulative(fn string, self *Tensor, dim int64, dtype string, code *int32, noRet bool) (*Tensor, error) {
	prod := C.int(0)
	switch fn {
	case "cumsum":
	case "cumprod":
		prod = 1
	default:
		return nil, fmt.Errorf("unknown cumulative fn %q", fn)
	}
	has, d := C.int(0), C.int32_t(0)
	if code != nil {
		has, d = 1, C.int32_t(*code)
	} else if dtype != "" {
		has, d = 1, C.int32_t(DtypeCode(dtype))
	}
	var ret C.AtenTensorHandle
	var retp *C.AtenTensorHandle
	if !noRet {
		retp = &ret
	}
	if err := check(C.of_cumulative(prod, self.handle(), C.int64_t(dim), has, d, retp)); err != nil {
		return nil, err
	}
	return &Tensor{ret}, nil
}

// DeviceCount is the number of usable CUDA devices (0 without a GPU or driver).
func DeviceCount() int {
	var n C.int32_t
	if C.slimcuda_device_count(&n) != 0 {
		return 0
	}
	return int(n)
}

var sdpaFns = map[string]C.int{"efficient": C.OF_SDPA_EFFICIENT, "flash": C.OF_SDPA_FLASH, "cudnn": C.OF_SDPA_CUDNN,
	"flash_for_cpu": C.OF_SDPA_FLASH_FOR_CPU}

// AttentionOptions are an attention shim's scalar arguments; Scale nil passes NULL (1/sqrt(D)).
type AttentionOptions struct {
	ComputeLogSumExp, IsCausal, ReturnDebugMask bool
	DropoutP                                    float64
	Scale                                       *float64
	NullRet0                                    bool // pass NULL for the output (bad input)
}

// AttentionResult is what an attention shim returned: Outputs[i] is ret<i> (nil where the
// shim gave NULL; ret4/ret5 are MaxQ/MaxK). Close frees every tensor.
type AttentionResult struct {
	Outputs    [9]*Tensor
	MaxQ, MaxK int64
}

// Close deletes every returned tensor; idempotent.
func (r *AttentionResult) Close() {
	if r == nil {
		return
	}
	for _, t := range r.Outputs {
		t.Close()
	}
}

// Attention calls aoti_torch_cuda__scaled_dot_product_<fn>_attention (fn efficient, flash or
// cudnn) or aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu (fn flash_for_cpu);
// bias may be nil, q/k/v nil pass NULL.
func Attention(fn string, q, k, v, bias *Tensor, o AttentionOptions) (*AttentionResult, error) {
	f, ok := sdpaFns[fn]
	if !ok {
		return nil, fmt.Errorf("unknown attention fn %q", fn)
	}
	var a C.of_sdpa
	a.compute_log_sumexp = C.int32_t(b2i(o.ComputeLogSumExp))
	a.is_causal = C.int32_t(b2i(o.IsCausal))
	a.return_debug_mask = C.int32_t(b2i(o.ReturnDebugMask))
	a.null_ret0 = C.int32_t(b2i(o.NullRet0))
	a.dropout_p = C.double(o.DropoutP)
	a.max_q, a.max_k = -1, -1
	if o.Scale != nil {
		a.has_scale = 1
		a.scale = C.double(*o.Scale)
	}
	if err := check(C.of_attention(f, q.handle(), k.handle(), v.handle(), bias.handle(), &a)); err != nil {
		for _, h := range a.h {
			if h != nil {
				C.of_delete(h)
			}
		}
		return nil, err
	}
	r := &AttentionResult{MaxQ: int64(a.max_q), MaxK: int64(a.max_k)}
	for i, h := range a.h {
		if h != nil {
			r.Outputs[i] = &Tensor{h}
		}
	}
	return r, nil
}

// Meta returns a tensor's sizes, strides, dtype code and whether it is on CUDA.
func (t *Tensor) Meta() (sizes, strides []int64, dtype int32, cuda bool, err error) {
	var nd C.int64_t
	var sz, st *C.int64_t
	var dt, devType C.int32_t
	if err := check(C.of_meta(t.h, &nd, &sz, &st, &dt, &devType)); err != nil {
		return nil, nil, 0, false, err
	}
	sizes, strides = []int64{}, []int64{}
	for i := 0; i < int(nd); i++ {
		sizes = append(sizes, int64(*(*C.int64_t)(unsafe.Add(unsafe.Pointer(sz), i*8))))
		strides = append(strides, int64(*(*C.int64_t)(unsafe.Add(unsafe.Pointer(st), i*8))))
	}
	return sizes, strides, int32(dt), devType == C.of_is_cuda(), nil
}

// DtypeCode is the shim dtype code of a fixture dtype name (-1 if unknown).
func DtypeCode(dtype string) int32 {
	code, ok := dtypes[dtype]
	if !ok {
		return -1
	}
	return int32(C.of_dtype(code))
}

// EmbeddingBagOptions are _embedding_bag's scalar arguments and which outputs to pass as NULL.
type EmbeddingBagOptions struct {
	ForwardOnly       bool // aoti_torch_<device>__embedding_bag_forward_only
	Mode              int64
	IncludeLastOffset bool
	PaddingIdx        int64
	NullRet           [4]bool
}

// EmbeddingBag calls aoti_torch_<cpu|cuda>__embedding_bag[_forward_only]; a nil tensor
// passes NULL (psw nil: no per_sample_weights). It returns output, offset2bag, bag_size
// and max_indices, the caller closing each.
func EmbeddingBag(cuda bool, weight, indices, offsets, psw *Tensor, o EmbeddingBagOptions) ([4]*Tensor, error) {
	var out [4]*Tensor
	nullRet := C.int(0)
	for i, n := range o.NullRet {
		if n {
			nullRet |= 1 << i
		}
	}
	var ret [4]C.AtenTensorHandle
	err := check(C.of_embedding_bag(b2i(cuda), b2i(o.ForwardOnly), weight.handle(), indices.handle(), offsets.handle(),
		C.int64_t(o.Mode), psw.handle(), C.int32_t(b2i(o.IncludeLastOffset)), C.int64_t(o.PaddingIdx), nullRet,
		&ret[0]))
	for i, h := range ret {
		if h != nil {
			out[i] = &Tensor{h}
		}
	}
	return out, err
}

var sortFns = map[string]C.int{"sort": C.OF_SORT, "sort_stable": C.OF_SORT_STABLE, "topk": C.OF_TOPK}

// SortArgs are a sort shim's scalar arguments (K, Largest and Sorted: topk only); NoRet0 /
// NoRet1 pass NULL for that output.
type SortArgs struct {
	Dim             int64
	Descending      bool
	K               int64
	Largest, Sorted bool
	NoRet0, NoRet1  bool
}

// Sort calls aoti_torch_<cpu|cuda>_<fn> (sort, sort_stable with stable 1, or topk): the
// values and the int64 indices. self nil passes NULL.
func Sort(fn string, cuda bool, self *Tensor, a SortArgs) (values, indices *Tensor, err error) {
	f, ok := sortFns[fn]
	if !ok {
		return nil, nil, fmt.Errorf("unknown sort fn %q", fn)
	}
	var r0, r1 C.AtenTensorHandle
	if err := check(C.of_sort(f, b2i(cuda), self.handle(), C.int64_t(a.Dim), C.int32_t(b2i(a.Descending)),
		C.int64_t(a.K), C.int32_t(b2i(a.Largest)), C.int32_t(b2i(a.Sorted)), b2i(a.NoRet0), b2i(a.NoRet1), &r0,
		&r1)); err != nil {
		return nil, nil, err
	}
	return &Tensor{r0}, &Tensor{r1}, nil
}

// Histc calls aoti_torch_<cpu|cuda>_histc; noRet passes a NULL ret0.
func Histc(cuda bool, self *Tensor, bins int64, min, max float64, noRet bool) (*Tensor, error) {
	var r C.AtenTensorHandle
	if err := check(C.of_histc(b2i(cuda), self.handle(), C.int64_t(bins), C.double(min), C.double(max), b2i(noRet),
		&r)); err != nil {
		return nil, err
	}
	return &Tensor{r}, nil
}

var searchFns = map[string]C.int{"searchsorted_Tensor": C.OF_SEARCH_TENSOR, "searchsorted_Scalar": C.OF_SEARCH_SCALAR,
	"bucketize": C.OF_BUCKETIZE}

// Search calls aoti_torch_<cpu|cuda>_searchsorted_Tensor, _searchsorted_Scalar (scalar) or
// _bucketize_Tensor (seq as the boundaries); side nil passes no side, sorter nil none.
func Search(fn string, cuda bool, seq, self *Tensor, scalar float64, outInt32, right bool, side *string,
	sorter *Tensor) (*Tensor, error) {
	f, ok := searchFns[fn]
	if !ok {
		return nil, fmt.Errorf("unknown searchsorted fn %q", fn)
	}
	var cs *C.char
	if side != nil {
		cs = C.CString(*side)
		defer C.free(unsafe.Pointer(cs))
	}
	var r C.AtenTensorHandle
	if err := check(C.of_search(f, b2i(cuda), seq.handle(), self.handle(), C.double(scalar), C.int32_t(b2i(outInt32)),
		C.int32_t(b2i(right)), cs, sorter.handle(), &r)); err != nil {
		return nil, err
	}
	return &Tensor{r}, nil
}
