// SPDX-License-Identifier: Apache-2.0

package slimcuda

import (
	"errors"
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
	require.Equal(t, Device{}, b.Device())
	require.Nil(t, b.Pointer())
	var x *Tensor
	require.Nil(t, x.Sizes())
	require.Equal(t, UnknownDType, x.DType())
}

// closer is one type's Close contract (doc.go, "Close"): a way to make an open value, and
// every method that must answer ErrInvalidState once the value is closed.
type closer struct {
	name    string
	nilOne  func() error // Close on a nil receiver
	open    func(t *testing.T) (close func() error, after map[string]func() error)
	gpuOnly bool
}

func closers() []closer {
	streamMethods := func(t *testing.T, s *Stream) (func() error, map[string]func() error) {
		x, err := NewTensor([]int64{2}, Float32, Device{Type: CPU})
		require.NoError(t, err)
		t.Cleanup(func() { x.Close() })
		return s.Close, map[string]func() error{
			"Synchronize":      s.Synchronize,
			"Device":           func() error { _, err := s.Device(); return err },
			"WithCallerStream": func() error { return WithCallerStream(s, func() error { return nil }) },
			"OnStream":         func() error { return CopyFromHost(x, []float32{1, 2}, OnStream(s)) },
			"TensorFrom/OnStream": func() error {
				y, err := TensorFrom([]int64{1}, []float32{1}, CPUDevice, OnStream(s))
				_ = y.Close()
				return err
			},
		}
	}
	return []closer{
		{name: "Stream/DefaultStream", nilOne: (*Stream)(nil).Close,
			open: func(t *testing.T) (func() error, map[string]func() error) { return streamMethods(t, DefaultStream()) }},
		{name: "Stream/WrapStream", nilOne: (*Stream)(nil).Close,
			open: func(t *testing.T) (func() error, map[string]func() error) {
				// Without a GPU no call reaches CUDA, so a made-up handle serves; with one,
				// wrap a real stream (CUDA would dereference a made-up one).
				handle := fakeHandle(0x7100)
				if n, _ := DeviceCount(); n > 0 {
					owner, err := NewStream()
					require.NoError(t, err)
					t.Cleanup(func() { owner.Close() })
					handle = owner.Handle()
				}
				return streamMethods(t, WrapStream(handle))
			}},
		{name: "Stream/NewStream", nilOne: (*Stream)(nil).Close, gpuOnly: true,
			open: func(t *testing.T) (func() error, map[string]func() error) {
				s, err := NewStream()
				require.NoError(t, err)
				return streamMethods(t, s)
			}},
		{name: "DeviceBuffer", nilOne: (*DeviceBuffer)(nil).Close,
			open: func(t *testing.T) (func() error, map[string]func() error) {
				b := &DeviceBuffer{size: 8} // owns nothing: the contract needs no GPU
				if n, _ := DeviceCount(); n > 0 {
					var err error
					b, err = Alloc(8)
					require.NoError(t, err)
				}
				return b.Close, map[string]func() error{
					"CopyFromHost": func() error { return b.CopyFromHost(make([]byte, 8)) },
					"CopyToHost":   func() error { return b.CopyToHost(make([]byte, 8)) },
					"FillFloat32":  func() error { return b.FillFloat32(1, 2) },
					"AxpyFloat32":  func() error { return AxpyFloat32(b, b, 2, 1) },
				}
			}},
		{name: "Tensor", nilOne: (*Tensor)(nil).Close,
			open: func(t *testing.T) (func() error, map[string]func() error) {
				x, err := NewTensor([]int64{2}, Float32, Device{Type: CPU})
				require.NoError(t, err)
				y, err := NewTensor([]int64{2}, Float32, Device{Type: CPU})
				require.NoError(t, err)
				t.Cleanup(func() { y.Close() })
				return x.Close, map[string]func() error{
					"Info":         func() error { _, err := x.Info(); return err },
					"View":         func() error { _, err := x.View([]int64{2}, []int64{1}, 0); return err },
					"Clone":        func() error { _, err := x.Clone(false); return err },
					"CopyFrom":     func() error { return x.CopyFrom(y) },
					"CopyFrom/src": func() error { return y.CopyFrom(x) },
					"CopyFromHost": func() error { return CopyFromHost(x, []float32{1, 2}) },
					"CopyToHost":   func() error { return CopyToHost(x, make([]float32, 2)) },
					"ToSlice":      func() error { _, err := ToSlice[float32](x); return err },
				}
			}},
		{name: "Model", nilOne: (*Model)(nil).Close,
			open: func(t *testing.T) (func() error, map[string]func() error) {
				m, err := Load(demoPackage(t), LoadOnDevice(CPUDevice))
				require.NoError(t, err)
				return m.Close, map[string]func() error{
					"Run": func() error { _, err := m.Run(nil); return err },
				}
			}},
	}
}

// Close means the same on every type: nil-safe, idempotent, and afterwards every method
// that can fail reports ErrInvalidState.
func TestCloseContract(t *testing.T) {
	gpus, _ := DeviceCount()
	for _, c := range closers() {
		t.Run(c.name, func(t *testing.T) {
			if c.gpuOnly && gpus == 0 {
				requireGPU(t)
			}
			require.NoError(t, c.nilOne(), "Close on nil")
			closeFn, after := c.open(t)
			for name, m := range after {
				err := m()
				require.False(t, errors.Is(err, ErrInvalidState), "%s before Close: %v", name, err)
			}
			require.NoError(t, closeFn())
			require.NoError(t, closeFn(), "Close is idempotent")
			for name, m := range after {
				require.ErrorIs(t, m(), ErrInvalidState, "%s after Close", name)
			}
		})
	}
}

// A failed Close reports its error once; the value is closed all the same, later Closes
// return nil, and a closed buffer no longer hands out its (freed) address.
func TestCloseReturnsTheFirstErrorOnce(t *testing.T) {
	gpus, _ := DeviceCount()
	host := make([]float32, 2)
	rows := map[string]func() error{
		// Not device memory: slimcuda_device_free refuses it (NotSupported without a GPU).
		"DeviceBuffer": (&DeviceBuffer{ptr: pointerOf(host), size: 8}).Close,
	}
	if gpus == 0 {
		// Without a GPU, destroying a stream fails before CUDA sees the (fake) handle.
		rows["Stream"] = (&Stream{handle: fakeHandle(0x7200), owned: true}).Close
	}
	for name, closeFn := range rows {
		t.Run(name, func(t *testing.T) {
			require.Error(t, closeFn())
			require.NoError(t, closeFn(), "the error is reported once")
		})
	}
	b := &DeviceBuffer{ptr: pointerOf(host), size: 8}
	require.NotNil(t, b.Pointer())
	_ = b.Close()
	require.Nil(t, b.Pointer(), "a closed buffer's address")
	require.Equal(t, 8, b.Len(), "accessors that cannot fail keep describing the value")
}
