// SPDX-License-Identifier: Apache-2.0

package slimcuda

// #include "wrappers.h"
import "C"

import (
	"strings"
	"unsafe"
)

// SetConfig overrides the library setting name (an environment variable's name, such as
// "SLIMCUDA_STAGING_THRESHOLD"; docs/configuration.md lists them) with value, parsed as the
// environment's would be: booleans are 1/true/yes/on or 0/false/no/off in any case,
// integers decimal digits, enum words any case; "" is the setting's default. The override
// applies to the library's next use of the setting. The environment itself is read once per
// process, so os.Setenv after the library's first use of a setting changes nothing: use
// SetConfig.
//
// Errors: ErrInvalidArgument for a name that is no setting or a bad value (nothing
// changes); ErrInvalidState for a setting read once at its first use (the caching
// allocator, the vendor library paths) that has been used and would change.
// Safe for concurrent use.
func SetConfig(name, value string) error {
	if err := noNUL("SetConfig", name, value); err != nil {
		return err
	}
	cname, cvalue := C.CString(name), C.CString(value)
	defer C.free(unsafe.Pointer(cname))
	defer C.free(unsafe.Pointer(cvalue))
	return check("SetConfig", C.sc_config_set(cname, cvalue, 1))
}

// ResetConfig drops SetConfig's override of name: the setting is the environment's again,
// or its default. Errors as SetConfig's.
func ResetConfig(name string) error {
	if err := noNUL("ResetConfig", name); err != nil {
		return err
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	return check("ResetConfig", C.sc_config_set(cname, nil, 0))
}

// Config returns the value in force of the setting name, in canonical form: "1" or "0", a
// number, a lower-case word, a path ("" where a path setting has none). Reading it does not
// count as the library's use of it. ErrInvalidArgument for a name that is no setting.
func Config(name string) (string, error) {
	if err := noNUL("Config", name); err != nil {
		return "", err
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	r := C.sc_config_get(cname)
	if err := check("Config", r); err != nil {
		return "", err
	}
	defer C.free(r.ptr)
	return C.GoStringN((*C.char)(r.ptr), C.int(r.i64)), nil
}

// noNUL refuses text C would cut at a NUL byte (a different name or value than asked for).
func noNUL(op string, texts ...string) error {
	for _, s := range texts {
		if strings.IndexByte(s, 0) >= 0 {
			return argError(op, "%q contains a NUL byte", s)
		}
	}
	return nil
}
