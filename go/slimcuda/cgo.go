package slimcuda

// #include <stdlib.h>
//
// #include "wrappers.h"
import "C"

import "unsafe"

// check turns a wrapper's result into nil or an *Error for operation op.
func check(op string, r C.sc_result) error {
	if r.code == 0 {
		return nil
	}
	msg := ""
	if r.msg != nil {
		msg = C.GoString(r.msg)
		C.free(unsafe.Pointer(r.msg))
	}
	return &Error{Op: op, Code: ErrorCode(r.code), Message: msg}
}

// streamArgs converts call options into the wrappers' (with_stream, stream) pair.
func streamArgs(op string, o callOptions) (C.int, unsafe.Pointer, error) {
	if !o.streamSet {
		return 0, nil, nil
	}
	if o.stream == nil {
		return 0, nil, argError(op, "OnStream(nil): use DefaultStream() for the legacy default stream")
	}
	return 1, o.stream.handle, nil
}

// noop crosses into C and back doing nothing: the cost of one cgo call.
func noop() error { return check("noop", C.sc_noop()) }
