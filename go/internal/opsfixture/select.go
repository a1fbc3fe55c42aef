// SPDX-License-Identifier: Apache-2.0

package opsfixture

// #include "select.h"
import "C"

import (
	"fmt"
	"unsafe"
)

var selectFns = map[string]C.int{"nonzero": C.OF_NONZERO, "nonzero_static": C.OF_NONZERO_STATIC,
	"masked_select": C.OF_MASKED_SELECT, "index": C.OF_INDEX}

// SelectArgs are a selection shim's other arguments: Mask (masked_select), Size and Fill
// (nonzero_static), Indices (index: nil entries are None); NullList / NullRet pass the index
// list / ret0 as NULL.
type SelectArgs struct {
	Mask              *Tensor
	Size, Fill        int64
	Indices           []*Tensor
	NullList, NullRet bool
}

// Select calls aoti_torch_<cpu|cuda>_<fn> for fn nonzero, nonzero_static, masked_select or
// index (index_Tensor); self nil passes NULL. It returns the new tensor, which the caller closes.
func Select(fn string, cuda bool, self *Tensor, a SelectArgs) (*Tensor, error) {
	f, ok := selectFns[fn]
	if !ok {
		return nil, fmt.Errorf("unknown selection fn %q", fn)
	}
	handles := make([]C.AtenTensorHandle, len(a.Indices)+1) // never empty: a valid pointer
	for i, t := range a.Indices {
		handles[i] = t.handle()
	}
	var r C.AtenTensorHandle
	err := check(C.of_select(f, b2i(cuda), self.handle(), a.Mask.handle(), C.int64_t(a.Size), C.int64_t(a.Fill),
		(*C.AtenTensorHandle)(unsafe.Pointer(&handles[0])), C.int64_t(len(a.Indices)), b2i(a.NullList), b2i(a.NullRet),
		&r))
	if r != nil {
		return &Tensor{r}, err
	}
	return nil, err
}
