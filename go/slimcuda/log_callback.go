// SPDX-License-Identifier: Apache-2.0

package slimcuda

// #include "wrappers.h"
import "C"

import "unsafe"

// setGoLogger routes the library's log to goSlimcudaLog (log.go) or back to stderr. The C
// call returns once no message is being delivered to the previous callback.
func setGoLogger(on bool) {
	flag := C.int(0)
	if on {
		flag = 1
	}
	r := C.sc_set_go_logger(flag)
	if r.msg != nil { // never: the C function always succeeds
		C.free(unsafe.Pointer(r.msg))
	}
}
