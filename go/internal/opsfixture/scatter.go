// SPDX-License-Identifier: Apache-2.0

package opsfixture

// #include "scatter_ops.h"
import "C"

import (
	"fmt"
	"unsafe"
)

var scatterFns = map[string]C.int{"scatter_src": C.OF_SCATTER_SRC, "scatter_value": C.OF_SCATTER_VALUE,
	"scatter_reduce": C.OF_SCATTER_REDUCE}

// ScatterArgs are a scatter shim's other arguments: Value (scatter_value), Reduce
// (scatter_reduce; nil passes NULL) and IncludeSelf.
type ScatterArgs struct {
	Dim         int64
	Value       float64
	Reduce      *string
	IncludeSelf bool
}

// Scatter calls aoti_torch_<cpu|cuda>_<fn>_out (fn scatter_src, scatter_value, or
// scatter_reduce for scatter_reduce_two_out) into out; a nil tensor passes NULL.
func Scatter(fn string, cuda bool, out, self, index, src *Tensor, a ScatterArgs) error {
	f, ok := scatterFns[fn]
	if !ok {
		return fmt.Errorf("unknown scatter fn %q", fn)
	}
	var reduce *C.char
	if a.Reduce != nil {
		reduce = C.CString(*a.Reduce)
		defer C.free(unsafe.Pointer(reduce))
	}
	return check(C.of_scatter(f, b2i(cuda), out.handle(), self.handle(), C.int64_t(a.Dim), index.handle(),
		src.handle(), C.double(a.Value), reduce, C.int32_t(b2i(a.IncludeSelf))))
}

// IndexPut calls aoti_torch_<cpu|cuda>_index_put: indices[i] nil is None; noRet passes a
// NULL ret0. At most 16 indices.
func IndexPut(cuda bool, self *Tensor, indices []*Tensor, values *Tensor, accumulate, noRet bool) (*Tensor, error) {
	if len(indices) > C.OF_MAX_INDICES {
		return nil, fmt.Errorf("%d indices: at most %d", len(indices), C.OF_MAX_INDICES)
	}
	handles := make([]C.AtenTensorHandle, len(indices)+1) // never empty
	for i, t := range indices {
		handles[i] = t.handle()
	}
	var r C.AtenTensorHandle
	if err := check(C.of_index_put(b2i(cuda), self.handle(), &handles[0], C.int64_t(len(indices)), values.handle(),
		C.int32_t(b2i(accumulate)), b2i(noRet), &r)); err != nil {
		return nil, err
	}
	return &Tensor{r}, nil
}

// MaskedScatter calls aoti_torch_<cpu|cuda>_masked_scatter; noRet passes a NULL ret0.
func MaskedScatter(cuda bool, self, mask, source *Tensor, noRet bool) (*Tensor, error) {
	var r C.AtenTensorHandle
	if err := check(C.of_masked_scatter(b2i(cuda), self.handle(), mask.handle(), source.handle(), b2i(noRet),
		&r)); err != nil {
		return nil, err
	}
	return &Tensor{r}, nil
}
