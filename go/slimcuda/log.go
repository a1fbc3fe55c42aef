// SPDX-License-Identifier: Apache-2.0

package slimcuda

// This file exports goSlimcudaLog to C, so its preamble may only declare (cgo copies it into
// two C files); the trampoline that calls it is in wrappers.h.

// #include <stdint.h>
import "C"

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"unsafe"
)

// The logger the library's messages go to; nil: stderr.
var logger atomic.Pointer[slog.Logger]

// setLoggerMu orders SetLogger calls, so the C callback and logger always change together.
var setLoggerMu sync.Mutex

// SetLogger sends the library's log — what it says outside a failed call's error, such as
// a bad setting in the environment (reported once per process, when the library first
// reads its settings) or a model's warning — to l, each message as one record with the
// library's level (slog.LevelDebug, LevelInfo, LevelWarn, LevelError). nil restores the
// default, "slimcuda: <message>" lines on stderr. Messages less severe than the setting
// SLIMCUDA_LOG_LEVEL (default "warning"; see SetConfig) never reach l: set it to "debug" to
// leave the choice to l's handler.
//
// l's handler runs on whichever thread the library logs from, possibly several at once, and
// must not call into this package (SetLogger waits for running handlers to return, and a
// call that logs would wait for a waiting SetLogger). Once SetLogger returns, the previous
// logger receives nothing more.
func SetLogger(l *slog.Logger) {
	setLoggerMu.Lock()
	defer setLoggerMu.Unlock()
	if l == nil {
		setGoLogger(false) // waits for messages being delivered to the old logger
		logger.Store(nil)
		return
	}
	logger.Store(l)
	setGoLogger(true)
}

// slogLevel maps the C ABI's SLIMCUDA_LOG_* levels (10 debug .. 40 error) to slog's.
func slogLevel(level int32) slog.Level {
	switch {
	case level < 20:
		return slog.LevelDebug
	case level < 30:
		return slog.LevelInfo
	case level < 40:
		return slog.LevelWarn
	default:
		return slog.LevelError
	}
}

//export goSlimcudaLog
func goSlimcudaLog(level C.int32_t, message *C.char, _ unsafe.Pointer) {
	msg := C.GoString(message)
	l := logger.Load()
	if l == nil {
		fmt.Fprintf(os.Stderr, "slimcuda: %s\n", msg)
		return
	}
	// A panic must not unwind into the C++ frames below: it is reported instead.
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(os.Stderr, "slimcuda: the logger panicked (%v) on: %s\n", p, msg)
		}
	}()
	l.Log(context.Background(), slogLevel(int32(level)), msg)
}
