package slimcuda

import (
	"errors"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Nil receivers of the accessor methods give documented zero results, not panics.
func TestNilReceiversGiveZeroResults(t *testing.T) {
	var m *Model
	require.Equal(t, Device{}, m.Device())
	require.Nil(t, m.Inputs())
	require.Nil(t, m.Outputs())
	var b *DeviceBuffer
	require.Equal(t, 0, b.Len())
	require.Equal(t, 0, b.Device())
	require.Nil(t, b.Pointer())
}

// A nil option in any variadic option list is skipped, as a nil CallOption always was.
func TestNilOptionsAreSkipped(t *testing.T) {
	data, err := os.ReadFile(demoPackage(t))
	require.NoError(t, err)
	m, err := LoadBytes(data, nil, LoadOnCPU(), nil)
	require.NoError(t, err)
	require.Equal(t, CPU, m.Device().Type)
	require.NoError(t, m.Close())

	x, err := NewTensor([]int64{2}, Float32, Device{Type: CPU}, nil)
	require.NoError(t, err)
	require.NoError(t, x.Close())

	gpu, _ := DeviceCount()
	b, err := Alloc(16, nil)
	if gpu > 0 {
		require.NoError(t, err)
		require.NoError(t, b.Close())
	} else {
		require.ErrorIs(t, err, ErrNotSupported)
	}
	s, err := NewStream(nil, NonBlocking(), nil)
	if gpu > 0 {
		require.NoError(t, err)
		require.NoError(t, s.Close())
	} else {
		require.ErrorIs(t, err, ErrNotSupported)
	}
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
			require.ErrorIs(t, x.CopyFromHost([]float32{1, 2}, OnStream(s)), ErrInvalidState)
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
					errs <- x.CopyFromHost([]float32{1, 2}, OnStream(s))
				}
			}()
		}
		require.NoError(t, s.Close())
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
