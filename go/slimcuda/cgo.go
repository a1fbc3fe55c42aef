// SPDX-License-Identifier: Apache-2.0

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
//
// With a stream, it holds the stream open (Stream.Close waits) until release is called:
// call release after the C call that uses the stream. release is never nil.
func streamArgs(op string, o callOptions) (with C.int, stream unsafe.Pointer, release func(), err error) {
	if !o.streamSet {
		return 0, nil, func() {}, nil
	}
	if o.stream == nil {
		return 0, nil, nil, argError(op, "OnStream(nil): use DefaultStream() for the legacy default stream")
	}
	h, release, err := o.stream.acquire(op)
	if err != nil {
		return 0, nil, nil, err
	}
	return 1, h, release, nil
}
