// SPDX-License-Identifier: Apache-2.0

package slimcuda

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

func TestCUDAVersions(t *testing.T) {
	runtime, driver, err := CUDAVersions()
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(runtime, "13."), runtime)
	n, err := DeviceCount()
	require.NoError(t, err)
	require.Equal(t, n > 0, driver != "none", "driver %s with %d devices", driver, n)
}

func TestPropertiesRejectsBadIndex(t *testing.T) {
	_, err := Properties(CUDADevice(-2))
	require.ErrorIs(t, err, ErrInvalidArgument)
	_, err = Properties(CUDADevice(4000))
	require.ErrorIs(t, err, ErrInvalidArgument)
	n, err := DeviceCount()
	require.NoError(t, err)
	_, err = Properties(CUDADevice(n)) // one past the last
	if n == 0 {
		require.ErrorIs(t, err, ErrNotSupported)
	} else {
		require.ErrorIs(t, err, ErrInvalidArgument)
	}
}

func TestPropertiesOnGPU(t *testing.T) {
	requireGPU(t)
	p, err := Properties(CUDADevice(0))
	require.NoError(t, err)
	require.NotEmpty(t, p.Name)
	require.Greater(t, p.TotalMemory, uint64(1<<30))
	require.Equal(t, "9.0", p.ComputeCapability) // the H200
}

func TestMemoryStats(t *testing.T) {
	n, err := DeviceCount()
	require.NoError(t, err)
	_, err = GetMemoryStats(CUDADevice(500))
	require.ErrorIs(t, err, ErrInvalidArgument)
	if n == 0 {
		_, err = GetMemoryStats(CUDADevice(0))
		require.ErrorIs(t, err, ErrNotSupported)
		require.ErrorIs(t, EmptyCache(CUDADevice(0)), ErrNotSupported)
		return
	}
	require.NoError(t, EmptyCache(CUDADevice(0)))
	before, err := GetMemoryStats(CUDADevice(0))
	require.NoError(t, err)
	b, err := Alloc(3000, OnDevice(CUDADevice(0)))
	require.NoError(t, err)
	during, err := GetMemoryStats(CUDADevice(0))
	require.NoError(t, err)
	require.Equal(t, before.AllocatedBytes+3072, during.AllocatedBytes) // 512-byte units
	require.NoError(t, b.Close())
	after, err := GetMemoryStats(CUDADevice(0))
	require.NoError(t, err)
	require.Equal(t, before.AllocatedBytes, after.AllocatedBytes)
	require.Equal(t, during.Allocations, after.Frees-before.Frees+before.Allocations)
}

// Closing a wrapped stream makes the cache forget it: a block freed on it is then handed
// to another stream at once. Closing a wrapped stream that nothing was freed on needs no GPU.
func TestWrappedStreamCloseReleasesItsBlocks(t *testing.T) {
	require.NoError(t, WrapStream(fakeHandle(0x7000)).Close())
	require.NoError(t, DefaultStream().Close())
	requireGPU(t)

	owner, err := NewStream(NonBlocking()) // stands in for another library's stream
	require.NoError(t, err)
	defer owner.Close()
	other, err := NewStream(NonBlocking())
	require.NoError(t, err)
	defer other.Close()

	const n = 5*1024*1024 + 768 // a size no other test leaves in the cache
	wrapped := WrapStream(owner.Handle())
	var first unsafe.Pointer
	require.NoError(t, WithCallerStream(wrapped, func() error {
		b, err := Alloc(n)
		if err != nil {
			return err
		}
		first = b.Pointer()
		if err := b.FillFloat32(1, n/4); err != nil {
			return err
		}
		return b.Close()
	}))
	require.NoError(t, wrapped.Close())
	require.NoError(t, wrapped.Close(), "Close is idempotent")

	require.NoError(t, WithCallerStream(other, func() error {
		b, err := Alloc(n)
		if err != nil {
			return err
		}
		defer b.Close()
		require.Equal(t, first, b.Pointer(), "the released stream's block should be free for any stream")
		return nil
	}))
}

// Pinned tensors come from the cached pinned pool: the second tensor of a size reuses the
// first one's block, and the statistics return to where they started.
func TestPinnedPool(t *testing.T) {
	n, err := DeviceCount()
	require.NoError(t, err)
	if n == 0 {
		_, err := GetPinnedMemoryStats()
		require.ErrorIs(t, err, ErrNotSupported)
		require.ErrorIs(t, EmptyPinnedCache(), ErrNotSupported)
	}
	requireGPU(t)
	require.NoError(t, EmptyPinnedCache())
	start, err := GetPinnedMemoryStats()
	require.NoError(t, err)
	const size = 6*1024*1024 + 40 // bytes
	var first unsafe.Pointer
	for round := 0; round < 2; round++ {
		x, err := NewTensor([]int64{size}, Uint8, Device{Type: CPU}, Pinned())
		require.NoError(t, err)
		info, err := x.Info()
		require.NoError(t, err)
		require.True(t, info.Pinned)
		if round == 0 {
			first = info.Data
		}
		require.Equal(t, first, info.Data, "round %d: the freed pinned block was not reused", round)
		require.NoError(t, x.Close())
	}
	end, err := GetPinnedMemoryStats()
	require.NoError(t, err)
	require.Equal(t, start.AllocatedBytes, end.AllocatedBytes)
	require.Equal(t, uint64(1), end.CacheHits-start.CacheHits)
	require.NoError(t, EmptyPinnedCache())
	end, err = GetPinnedMemoryStats()
	require.NoError(t, err)
	require.Equal(t, start.ReservedBytes, end.ReservedBytes)
}

func TestKernelsDeviceCount(t *testing.T) {
	for _, c := range fx.Cases(t, "kernels.json", "device_count") {
		t.Run(c.Name, func(t *testing.T) {
			fx.Begin(t, c)
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

// A device is a Device value everywhere: CPU, CUDA by index, or the current CUDA device.
func TestDeviceValues(t *testing.T) {
	require.Equal(t, Device{Type: CUDA, Index: 2}, CUDADevice(2))
	require.Equal(t, Device{Type: CUDA, Index: -1}, CurrentCUDA)
	require.Equal(t, Device{Type: CPU}, CPUDevice)
	require.Equal(t, "cuda:2", CUDADevice(2).String())
	require.Equal(t, "cuda", CurrentCUDA.String())
	require.Equal(t, "cpu", CPUDevice.String())
}

// Calls that only make sense for CUDA refuse a CPU Device (or another type) up front, with
// or without a GPU.
func TestCUDAOnlyCallsRefuseOtherDevices(t *testing.T) {
	for _, d := range []Device{CPUDevice, {Type: DeviceType(7)}, CUDADevice(-2), CUDADevice(4000)} {
		_, err := Alloc(16, OnDevice(d))
		require.ErrorIs(t, err, ErrInvalidArgument, "Alloc on %v", d)
		_, err = NewStream(StreamOnDevice(d))
		require.ErrorIs(t, err, ErrInvalidArgument, "NewStream on %v", d)
		_, err = GetMemoryStats(d)
		require.ErrorIs(t, err, ErrInvalidArgument, "GetMemoryStats on %v", d)
		require.ErrorIs(t, EmptyCache(d), ErrInvalidArgument, "EmptyCache on %v", d)
		_, err = Properties(d)
		require.ErrorIs(t, err, ErrInvalidArgument, "Properties on %v", d)
	}
}

// CurrentCUDA is resolved when a buffer or stream is made, in the same C call, so what
// the object reports (and later calls use) never depends on which OS thread a goroutine
// runs on afterwards. Properties reports the resolved device too.
func TestCurrentCUDAIsResolvedAtCreation(t *testing.T) {
	requireGPU(t)
	b, err := Alloc(64)
	require.NoError(t, err)
	defer b.Close()
	require.Equal(t, CUDADevice(0), b.Device())
	s, err := NewStream(StreamOnDevice(CurrentCUDA))
	require.NoError(t, err)
	defer s.Close()
	d, err := s.Device()
	require.NoError(t, err)
	require.Equal(t, CUDADevice(0), d)
	p, err := Properties(CurrentCUDA)
	require.NoError(t, err)
	require.Equal(t, CUDADevice(0), p.Device)
}
