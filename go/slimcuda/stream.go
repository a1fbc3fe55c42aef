// SPDX-License-Identifier: Apache-2.0

package slimcuda

// #include "wrappers.h"
import "C"

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// A Stream is a CUDA stream: one this package created (NewStream), one borrowed from
// another library (WrapStream), or the legacy default stream (DefaultStream).
//
// A Stream is safe for concurrent use, Close included: calls that pass the stream to CUDA
// (Synchronize, Device, and calls with OnStream or inside WithCallerStream) hold it open,
// and Close waits for them. After Close every such call returns an *Error with Code
// ErrInvalidState ("stream is closed") without calling CUDA.
type Stream struct {
	handle unsafe.Pointer // cudaStream_t; nil is the legacy default stream
	owned  bool           // created here: Close destroys it
	device Device         // for owned streams: the device it was created on
	mu     sync.RWMutex   // calls using handle hold it shared, Close exclusively
	closed bool
	scopes atomic.Int32 // WithCallerStream scopes selecting the stream now
}

// StreamOption configures NewStream.
type StreamOption func(*streamConfig)

type streamConfig struct {
	nonBlocking bool
	device      Device
}

// NonBlocking makes the stream not synchronize with the legacy default stream
// (cudaStreamNonBlocking).
func NonBlocking() StreamOption { return func(c *streamConfig) { c.nonBlocking = true } }

// StreamOnDevice creates the stream on a CUDA device (default: CurrentCUDA, resolved by
// NewStream).
func StreamOnDevice(device Device) StreamOption { return func(c *streamConfig) { c.device = device } }

// NewStream creates a CUDA stream and records the device it was created on. Close it when
// done. A device that is not CUDA is ErrInvalidArgument. Nil options are skipped.
func NewStream(opts ...StreamOption) (*Stream, error) {
	cfg := streamConfig{device: CurrentCUDA}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	index, err := cudaIndex("NewStream", cfg.device)
	if err != nil {
		return nil, err
	}
	flags := C.int32_t(C.SLIMCUDA_STREAM_DEFAULT)
	if cfg.nonBlocking {
		flags = C.SLIMCUDA_STREAM_NON_BLOCKING
	}
	r := C.sc_stream_create(flags, index)
	if err := check("NewStream", r); err != nil {
		return nil, err
	}
	s := &Stream{handle: r.ptr, owned: true, device: CUDADevice(int(r.device))}
	// A backstop only: streams are meant to be closed explicitly.
	runtime.SetFinalizer(s, func(s *Stream) { s.Close() })
	return s, nil
}

// WrapStream borrows a cudaStream_t created elsewhere (another library's stream). Close
// does not destroy it: it waits for the device and makes slimcuda's cached memory forget
// the stream, so call Close before the owner destroys the stream. A nil handle is the
// legacy default stream.
func WrapStream(handle unsafe.Pointer) *Stream { return &Stream{handle: handle} }

// DefaultStream returns the legacy default stream (CUDA's stream 0). Selecting it as the
// caller stream is a real selection, distinct from selecting nothing.
func DefaultStream() *Stream { return &Stream{} }

// Handle returns the cudaStream_t (nil for the legacy default stream), for passing to
// other CUDA libraries.
func (s *Stream) Handle() unsafe.Pointer {
	if s == nil {
		return nil
	}
	return s.handle
}

// acquire holds the stream open for a call that passes its handle to C: release it after
// the call. It fails with ErrInvalidState once the stream is closed.
func (s *Stream) acquire(op string) (handle unsafe.Pointer, release func(), err error) {
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return nil, nil, &Error{Op: op, Code: ErrInvalidState, Message: "stream is closed"}
	}
	return s.handle, s.mu.RUnlock, nil
}

// Synchronize blocks until all work enqueued on the stream has finished
// (ErrInvalidState after Close).
func (s *Stream) Synchronize() error {
	const op = "Stream.Synchronize"
	if s == nil {
		return argError(op, "nil stream")
	}
	h, release, err := s.acquire(op)
	if err != nil {
		return err
	}
	defer release()
	err = check(op, C.sc_stream_synchronize(h))
	runtime.KeepAlive(s)
	return err
}

// Device returns the CUDA device the stream belongs to (ErrInvalidState after Close): for
// a NewStream stream the device it was created on; a wrapped stream's is read from CUDA;
// the legacy default stream exists on every device, so DefaultStream reports the calling
// thread's current device.
func (s *Stream) Device() (Device, error) {
	const op = "Stream.Device"
	if s == nil {
		return Device{}, argError(op, "nil stream")
	}
	h, release, err := s.acquire(op)
	if err != nil {
		return Device{}, err
	}
	defer release()
	if s.owned {
		return s.device, nil
	}
	r := C.sc_stream_device(h)
	runtime.KeepAlive(s)
	if err := check(op, r); err != nil {
		return Device{}, err
	}
	return CUDADevice(int(r.i64)), nil
}

// Close destroys a stream made by NewStream. For a wrapped stream it leaves the stream
// alone but waits for its device and makes slimcuda's cached memory forget it (see
// WrapStream); for the default stream it does nothing in CUDA. Every kind of Stream is
// closed afterwards (see Stream). Close waits for calls using the stream to return; while
// a WithCallerStream scope selects the stream, Close returns ErrInvalidState and leaves it
// open (close it after the scope). Otherwise Close follows the package's Close contract
// (see the package documentation): nil-safe, idempotent, its error reported once.
func (s *Stream) Close() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	if s.scopes.Load() > 0 {
		return &Error{Op: "Stream.Close", Code: ErrInvalidState, Message: "stream is selected by a WithCallerStream scope"}
	}
	s.closed = true
	runtime.SetFinalizer(s, nil)
	switch {
	case s.owned:
		return check("Stream.Close", C.sc_stream_destroy(s.handle))
	case s.handle != nil:
		return check("Stream.Close", C.sc_stream_release(s.handle))
	}
	return nil
}

// WithCallerStream runs fn with s selected as the caller stream: every slimcuda call fn
// makes on this goroutine uses s. The goroutine is locked to its OS thread for the scope
// (the selection is per thread), and the previous selection is restored afterwards, also
// when fn panics. Goroutines started by fn do not inherit the selection. Scopes nest. A
// closed s is ErrInvalidState (fn is not called); s cannot be closed while the scope runs.
func WithCallerStream(s *Stream, fn func() error) error {
	const op = "WithCallerStream"
	if s == nil || fn == nil {
		return argError(op, "nil stream or function")
	}
	h, release, err := s.acquire(op)
	if err != nil {
		return err
	}
	// The scope count, not the lock, keeps s open while fn runs, so fn may use s (and a
	// Close inside fn is refused instead of deadlocking).
	s.scopes.Add(1)
	release()
	defer s.scopes.Add(-1)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := check(op, C.sc_caller_stream_push(h)); err != nil {
		return err
	}
	defer C.sc_caller_stream_pop()
	defer runtime.KeepAlive(s)
	return fn()
}

// callerStream reports this thread's selection (tests; meaningful only on a locked thread).
func callerStream() (handle unsafe.Pointer, selected bool, err error) {
	r := C.sc_caller_stream_get()
	if err := check("callerStream", r); err != nil {
		return nil, false, err
	}
	return r.ptr, r.i64 != 0, nil
}

// pushCallerStream and popCallerStream expose the C stack to tests, which must hold the
// OS thread themselves.
func pushCallerStream(handle unsafe.Pointer) error {
	return check("pushCallerStream", C.sc_caller_stream_push(handle))
}

func popCallerStream() error { return check("popCallerStream", C.sc_caller_stream_pop()) }
