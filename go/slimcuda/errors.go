// SPDX-License-Identifier: Apache-2.0

package slimcuda

import (
	"fmt"
	"io/fs"
	"strings"
)

// ErrorCode is a libslimcuda error code; the values are ABI-stable and match slimcuda.h.
// Each code is itself an error, so it serves as the sentinel for errors.Is.
type ErrorCode int32

// The error codes. Test for them with errors.Is(err, slimcuda.ErrInvalidArgument).
const (
	ErrInternal               ErrorCode = 0x01 // a CUDA or system call failed
	ErrInvalidState           ErrorCode = 0x02 // the call is not valid now
	ErrNotSupported           ErrorCode = 0x10 // e.g. no GPU or no driver
	ErrNotImplemented         ErrorCode = 0x11
	ErrInvalidArgument        ErrorCode = 0x12
	ErrInvalidType            ErrorCode = 0x13
	ErrNotFound               ErrorCode = 0x20
	ErrMemoryAllocationFailed ErrorCode = 0x21
	ErrAccessFailed           ErrorCode = 0x22
	ErrInvalidProgram         ErrorCode = 0x23
	ErrOutOfResources         ErrorCode = 0x25
)

var codeNames = map[ErrorCode]string{
	ErrInternal:               "Internal",
	ErrInvalidState:           "InvalidState",
	ErrNotSupported:           "NotSupported",
	ErrNotImplemented:         "NotImplemented",
	ErrInvalidArgument:        "InvalidArgument",
	ErrInvalidType:            "InvalidType",
	ErrNotFound:               "NotFound",
	ErrMemoryAllocationFailed: "MemoryAllocationFailed",
	ErrAccessFailed:           "AccessFailed",
	ErrInvalidProgram:         "InvalidProgram",
	ErrOutOfResources:         "OutOfResources",
}

// String returns the code's name, as in slimcuda.h ("InvalidArgument").
func (c ErrorCode) String() string {
	if n, ok := codeNames[c]; ok {
		return n
	}
	return fmt.Sprintf("ErrorCode(%#x)", int32(c))
}

// Error implements error.
func (c ErrorCode) Error() string { return "slimcuda: " + c.String() }

// CodeByName returns the code named name ("InvalidArgument"); ok is false for unknown
// names. "Ok" is code 0.
func CodeByName(name string) (code ErrorCode, ok bool) {
	if name == "Ok" {
		return 0, true
	}
	for c, n := range codeNames {
		if n == name {
			return c, true
		}
	}
	return 0, false
}

// Error is a failed operation: which call, the code, and the library's message. It reads
// once: "slimcuda: Load: NotFound: slimcuda_model_load_file_with: cannot open m.slimcuda: No
// such file or directory".
type Error struct {
	Op      string    // the Go operation, e.g. "CopyFromHost"
	Code    ErrorCode // what kind of failure
	Message string    // libslimcuda's text, naming the C function and the reason
	// Err is the operating system's cause, when the library reported one that Go has a
	// sentinel for: fs.ErrNotExist for a missing file, fs.ErrPermission for a refused one.
	Err error
}

func (e *Error) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("slimcuda: %s: %s", e.Op, e.Code.String())
	}
	return fmt.Sprintf("slimcuda: %s: %s: %s", e.Op, e.Code.String(), e.Message)
}

// Unwrap returns the code and the OS cause (when there is one), so both
// errors.Is(err, ErrNotFound) and errors.Is(err, fs.ErrNotExist) work.
func (e *Error) Unwrap() []error {
	if e.Err != nil {
		return []error{e.Code, e.Err}
	}
	return []error{e.Code}
}

// withFileCause adds the OS cause to a failed file operation: the C library reports a
// missing file as NotFound and a refused one as AccessFailed with strerror's text.
func withFileCause(err error) error {
	e, ok := err.(*Error)
	if !ok {
		return err
	}
	switch {
	case e.Code == ErrNotFound:
		e.Err = fs.ErrNotExist
	case e.Code == ErrAccessFailed && strings.Contains(e.Message, "Permission denied"):
		e.Err = fs.ErrPermission
	}
	return e
}

// argError reports bad input detected on the Go side, in the same shape as C's.
func argError(op, format string, args ...any) error {
	return &Error{Op: op, Code: ErrInvalidArgument, Message: fmt.Sprintf(format, args...)}
}
