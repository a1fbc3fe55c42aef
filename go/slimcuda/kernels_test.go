package slimcuda

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The kernel entry points and basic calls, driven by testdata/kernels.json (also run by
// csrc/kernels/kernels_test.cc).

func errorIs(err error, code ErrorCode) bool { return errors.Is(err, code) }

func containsMessage(err error, msg string) bool {
	var e *Error
	return errors.As(err, &e) && strings.Contains(e.Message, msg)
}

func TestKernelsDeviceCount(t *testing.T) {
	for _, c := range fx.Cases(t, "kernels.json", "device_count") {
		t.Run(c.Name, func(t *testing.T) {
			if !fx.Begin(t, c) {
				t.Skip("needs " + c.Requires)
			}
			n, err := DeviceCount()
			expectCode(t, c, err)
			require.GreaterOrEqual(t, n, 0)
			var want int
			if c.GetOr(t, "count", &want) {
				require.Equal(t, want, n)
			}
		})
	}
}

func TestKernelsFill(t *testing.T) {
	for _, c := range fx.Cases(t, "kernels.json", "fill") {
		t.Run(c.Name, func(t *testing.T) {
			if !fx.Begin(t, c) {
				t.Skip("needs " + c.Requires)
			}
			var n int
			var value float32
			var dst string
			c.Get(t, "n", &n)
			c.Get(t, "value", &value)
			c.Get(t, "dst", &dst)
			device := 0
			c.GetOr(t, "device_index", &device)

			if dst == "device" {
				buf, err := Alloc(4*max(n, 1), OnDevice(0))
				require.NoError(t, err)
				defer func() { require.NoError(t, buf.Close()) }()
				// Reach the C entry point with the fixture's device index, as C++ does.
				b := *buf
				b.device = device
				expectCode(t, c, b.FillFloat32(value, n))
				if c.IsNull("message") && n > 0 && device == 0 {
					got := make([]float32, n)
					require.NoError(t, buf.CopyToHost(AsBytes(got)))
					wrong := 0
					for _, v := range got {
						if v != value {
							wrong++
						}
					}
					require.Zero(t, wrong, "of %d elements, first %v, last %v", n, got[0], got[n-1])
				}
				return
			}
			// A host buffer or none: the C ABI must refuse before touching memory.
			host := make([]float32, n+1)
			b := &DeviceBuffer{size: 4 * n, device: device}
			if dst == "host" {
				b.ptr = pointerOf(host)
			}
			expectCode(t, c, b.FillFloat32(value, n))
			for _, v := range host {
				require.Zero(t, v, "a refused fill wrote host memory")
			}
		})
	}
}

func TestKernelsAxpy(t *testing.T) {
	for _, c := range fx.Cases(t, "kernels.json", "axpy") {
		t.Run(c.Name, func(t *testing.T) {
			if !fx.Begin(t, c) {
				t.Skip("needs " + c.Requires)
			}
			var a float32
			c.Get(t, "a", &a)
			if c.IsNull("x") {
				y := []float32{1}
				yb := &DeviceBuffer{ptr: pointerOf(y), size: 4}
				xb := &DeviceBuffer{size: 4} // a null pointer
				expectCode(t, c, AxpyFloat32(yb, xb, 1, a))
				return
			}
			var x, y, want []float32
			c.Get(t, "x", &x)
			c.Get(t, "y", &y)
			c.Get(t, "expect_y", &want)
			require.Len(t, y, len(x))
			xb, err := Alloc(4*len(x), OnDevice(0))
			require.NoError(t, err)
			defer xb.Close()
			yb, err := Alloc(4*len(y), OnDevice(0))
			require.NoError(t, err)
			defer yb.Close()
			require.NoError(t, xb.CopyFromHost(AsBytes(x)))
			require.NoError(t, yb.CopyFromHost(AsBytes(y)))
			expectCode(t, c, AxpyFloat32(yb, xb, len(x), a))
			got := make([]float32, len(y))
			require.NoError(t, yb.CopyToHost(AsBytes(got)))
			require.Equal(t, want, got)
		})
	}
}
