// SPDX-License-Identifier: Apache-2.0

package slimcuda

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// Caller-stream semantics from testdata/caller_stream.json (csrc/c_api/
// caller_stream_api_test.cc runs the same cases), through the C push/pop ABI on a locked thread.

type step struct {
	Push   *string `json:"push"`
	Pop    *string `json:"pop"`
	Expect *string `json:"expect"`
	Thread []step  `json:"thread"`
}

// token maps a fixture stream name to a stand-in handle: stored and compared by the
// library, never dereferenced. The values lie far below the Go heap.
func token(name string) unsafe.Pointer {
	if name == "default" {
		return nil
	}
	return fakeHandle(uintptr(0x1000 * (int(name[0]-'A') + 1)))
}

func describe(h unsafe.Pointer, selected bool) string {
	switch {
	case !selected:
		return "none"
	case h == nil:
		return "default"
	}
	return string(rune('A' + int(uintptr(h)/0x1000) - 1))
}

// runSteps runs steps on the calling goroutine's (locked) OS thread; "thread" steps run
// on a new goroutine locked to its own thread.
func runSteps(t *testing.T, steps []step, where string) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for i, s := range steps {
		at := fmt.Sprintf("%s step %d", where, i)
		switch {
		case s.Push != nil:
			require.NoError(t, pushCallerStream(token(*s.Push)), at)
		case s.Pop != nil:
			err := popCallerStream()
			if *s.Pop == "Ok" {
				require.NoError(t, err, at)
			} else {
				code, ok := CodeByName(*s.Pop)
				require.True(t, ok, at)
				require.ErrorIs(t, err, code, at)
			}
		case s.Expect != nil:
			h, selected, err := callerStream()
			require.NoError(t, err, at)
			require.Equal(t, *s.Expect, describe(h, selected), at)
		case s.Thread != nil:
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				runSteps(t, s.Thread, where+" (child thread)")
			}()
			wg.Wait()
		default:
			t.Fatalf("%s: unknown step", at)
		}
	}
}

func TestCallerStreamSequences(t *testing.T) {
	for _, c := range fx.Cases(t, "caller_stream.json", "sequence") {
		t.Run(c.Name, func(t *testing.T) {
			fx.Begin(t, c)
			var steps []step
			c.Get(t, "steps", &steps)
			runSteps(t, steps, c.Name)
		})
	}
}

func TestWithCallerStreamNestsAndRestores(t *testing.T) {
	a, b := WrapStream(token("A")), DefaultStream()
	err := WithCallerStream(a, func() error {
		h, sel, err := callerStream()
		require.NoError(t, err)
		require.Equal(t, "A", describe(h, sel))
		require.NoError(t, WithCallerStream(b, func() error {
			h, sel, err := callerStream()
			require.NoError(t, err)
			require.Equal(t, "default", describe(h, sel), "the default stream is a real selection")
			return nil
		}))
		h, sel, err = callerStream()
		require.NoError(t, err)
		require.Equal(t, "A", describe(h, sel))
		return nil
	})
	require.NoError(t, err)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_, sel, err := callerStream()
	require.NoError(t, err)
	require.False(t, sel, "selection outlived its scope")
}

func TestWithCallerStreamReturnsFnErrorAndRestoresOnPanic(t *testing.T) {
	sentinel := fmt.Errorf("boom")
	require.ErrorIs(t, WithCallerStream(DefaultStream(), func() error { return sentinel }), sentinel)
	require.Panics(t, func() {
		_ = WithCallerStream(WrapStream(token("B")), func() error { panic("fn panicked") })
	})
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_, sel, err := callerStream()
	require.NoError(t, err)
	require.False(t, sel, "a panicking scope left its selection behind")
}

func TestWithCallerStreamRejectsNil(t *testing.T) {
	require.ErrorIs(t, WithCallerStream(nil, func() error { return nil }), ErrInvalidArgument)
	require.ErrorIs(t, WithCallerStream(DefaultStream(), nil), ErrInvalidArgument)
}

// 1,000 goroutines, GOMAXPROCS >= 4, each with its own stream, interleave scoped and
// per-call selections with runtime.Gosched(): none ever observes another's selection, and
// outside a scope none is ever selected. With a GPU the streams are real and each
// goroutine also copies through its stream.
func TestCallerStreamNeverLeaksBetweenGoroutines(t *testing.T) {
	prev := runtime.GOMAXPROCS(max(4, runtime.GOMAXPROCS(0)))
	defer runtime.GOMAXPROCS(prev)
	n, err := DeviceCount()
	require.NoError(t, err)
	gpu := n > 0

	const goroutines, rounds = 1000, 20
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			errs <- oneGoroutine(g, gpu, rounds)
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func oneGoroutine(g int, gpu bool, rounds int) error {
	var s *Stream
	var buf *DeviceBuffer
	if gpu && g%10 == 0 { // real streams and copies for a tenth: enough work, bounded time
		var err error
		if s, err = NewStream(NonBlocking()); err != nil {
			return err
		}
		defer s.Close()
		if buf, err = Alloc(64); err != nil {
			return err
		}
		defer buf.Close()
	} else {
		s = WrapStream(fakeHandle(uintptr(0x100000 + 0x100*g)))
	}
	want := s.Handle()
	for r := 0; r < rounds; r++ {
		err := WithCallerStream(s, func() error {
			for i := 0; i < 3; i++ {
				h, sel, err := callerStream()
				if err != nil {
					return err
				}
				if !sel || h != want {
					return fmt.Errorf("goroutine %d saw selection %p (selected %v), want %p", g, h, sel, want)
				}
				runtime.Gosched()
			}
			if buf != nil {
				in := []byte{byte(g), byte(r), 1, 2}
				out := make([]byte, 4)
				if err := buf.CopyFromHost(in); err != nil {
					return err
				}
				if err := buf.CopyToHost(out); err != nil {
					return err
				}
				if string(in) != string(out) {
					return fmt.Errorf("goroutine %d: copy round trip %v != %v", g, out, in)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		runtime.Gosched()
		// Outside the scope, whichever thread we are on has no selection.
		runtime.LockOSThread()
		_, sel, err := callerStream()
		runtime.UnlockOSThread()
		if err != nil {
			return err
		}
		if sel {
			return fmt.Errorf("goroutine %d found a selection outside any scope", g)
		}
	}
	return nil
}

// closedStreams are streams of each kind, closed; NewStream's only with a GPU.
func closedStreams(t *testing.T) map[string]*Stream {
	streams := map[string]*Stream{"DefaultStream": DefaultStream(), "WrapStream(nil)": WrapStream(nil)}
	if n, _ := DeviceCount(); n > 0 {
		s, err := NewStream()
		require.NoError(t, err)
		streams["NewStream"] = s
	}
	for _, s := range streams {
		require.NoError(t, s.Close())
	}
	return streams
}

// After Close every use of a stream is ErrInvalidState, decided in Go: nothing passes the
// closed stream to CUDA. Close stays idempotent.
func TestClosedStreamIsInvalidState(t *testing.T) {
	for name, s := range closedStreams(t) {
		t.Run(name, func(t *testing.T) {
			require.ErrorIs(t, s.Synchronize(), ErrInvalidState)
			_, err := s.Device()
			require.ErrorIs(t, err, ErrInvalidState)
			var e *Error
			require.True(t, errors.As(err, &e))
			require.Contains(t, e.Message, "stream is closed")
			called := false
			err = WithCallerStream(s, func() error { called = true; return nil })
			require.ErrorIs(t, err, ErrInvalidState)
			require.False(t, called)
			x, err := NewTensor([]int64{2}, Float32, Device{Type: CPU})
			require.NoError(t, err)
			defer x.Close()
			require.ErrorIs(t, CopyFromHost(x, []float32{1, 2}, OnStream(s)), ErrInvalidState)
			require.NoError(t, s.Close())
		})
	}
}

// Close inside a WithCallerStream scope of the same stream is refused (the scope still
// uses it) and the stream stays usable; after the scope Close works.
func TestCloseInsideItsCallerStreamScope(t *testing.T) {
	s := DefaultStream()
	err := WithCallerStream(s, func() error { return s.Close() })
	require.ErrorIs(t, err, ErrInvalidState)
	require.NoError(t, WithCallerStream(s, func() error { return nil }))
	require.NoError(t, s.Close())
	require.ErrorIs(t, WithCallerStream(s, func() error { return nil }), ErrInvalidState)
}

// Close racing the stream's other methods: each call either runs on the open stream or
// reports ErrInvalidState; none crashes (run under -race, and on a GPU with a real stream).
//
//	goroutine 1..8:  Synchronize | Device | WithCallerStream | CopyFromHost(OnStream) ...
//	goroutine 0:            Close
func TestStreamCloseRacesOtherMethods(t *testing.T) {
	n, _ := DeviceCount()
	for round := 0; round < 20; round++ {
		s := DefaultStream()
		if n > 0 {
			var err error
			s, err = NewStream()
			require.NoError(t, err)
		}
		x, err := NewTensor([]int64{2}, Float32, Device{Type: CPU})
		require.NoError(t, err)
		var wg sync.WaitGroup
		errs := make(chan error, 1000)
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 10; i++ {
					errs <- s.Synchronize()
					_, err := s.Device()
					errs <- err
					errs <- WithCallerStream(s, func() error { return nil })
					errs <- CopyFromHost(x, []float32{1, 2}, OnStream(s))
				}
			}()
		}
		// Close refuses while a goroutine's WithCallerStream scope selects the stream
		// (ErrInvalidState, documented); it succeeds once no scope does.
		for {
			err := s.Close()
			if err == nil {
				break
			}
			require.ErrorIs(t, err, ErrInvalidState)
			runtime.Gosched()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil && !errors.Is(err, ErrInvalidState) && !errors.Is(err, ErrNotSupported) {
				t.Fatalf("unexpected error: %v", err)
			}
		}
		require.NoError(t, x.Close())
	}
}
