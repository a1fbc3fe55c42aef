// SPDX-License-Identifier: Apache-2.0

package slimcuda

// #include <stdlib.h>
//
// #include "wrappers.h"
import "C"

import (
	"runtime"
	"unsafe"
)

// CheckPackage checks package bytes as Load would, loading nothing and running none of the
// library's code: Ok says the package is well formed, not that its code is safe to run.
func CheckPackage(data []byte) error {
	r := C.sc_package_check(slicePtr(data), C.size_t(len(data)))
	runtime.KeepAlive(data)
	return check("CheckPackage", r)
}

// Pack writes a model package from a JSON manifest (format: csrc/package/manifest.h).
// The manifest (at most 16 MiB), its libraries and its weights (each at most the package
// cap) are read as Load reads a package, with the same codes: ErrNotFound, ErrAccessFailed,
// ErrInvalidArgument (not a regular file, or over its cap) and ErrOutOfResources.
// Malformed JSON, or a number that is not an integer in its field's range, is
// ErrInvalidArgument naming the field and tensor; metadata against the package rules is
// ErrInvalidProgram. outPath must be a regular file or absent: a directory, FIFO or device
// is ErrInvalidArgument (a FIFO never blocks); one that cannot be created or written is
// ErrAccessFailed with the system's text.
func Pack(manifestPath, outPath string) error {
	cm, co := C.CString(manifestPath), C.CString(outPath)
	defer C.free(unsafe.Pointer(cm))
	defer C.free(unsafe.Pointer(co))
	return withFileCause(check("Pack", C.sc_package_pack(cm, co)))
}
