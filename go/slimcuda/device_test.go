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
	_, err := Properties(-2)
	require.ErrorIs(t, err, ErrInvalidArgument)
	_, err = Properties(4000)
	require.ErrorIs(t, err, ErrInvalidArgument)
	n, err := DeviceCount()
	require.NoError(t, err)
	_, err = Properties(n) // one past the last
	if n == 0 {
		require.ErrorIs(t, err, ErrNotSupported)
	} else {
		require.ErrorIs(t, err, ErrInvalidArgument)
	}
}

func TestPropertiesOnGPU(t *testing.T) {
	requireGPU(t)
	p, err := Properties(0)
	require.NoError(t, err)
	require.NotEmpty(t, p.Name)
	require.Greater(t, p.TotalMemory, uint64(1<<30))
	require.Equal(t, "9.0", p.ComputeCapability) // the H200
}

func TestMemoryStats(t *testing.T) {
	n, err := DeviceCount()
	require.NoError(t, err)
	_, err = GetMemoryStats(500)
	require.ErrorIs(t, err, ErrInvalidArgument)
	if n == 0 {
		_, err = GetMemoryStats(0)
		require.ErrorIs(t, err, ErrNotSupported)
		require.ErrorIs(t, EmptyCache(0), ErrNotSupported)
		return
	}
	require.NoError(t, EmptyCache(0))
	before, err := GetMemoryStats(0)
	require.NoError(t, err)
	b, err := Alloc(3000, OnDevice(0))
	require.NoError(t, err)
	during, err := GetMemoryStats(0)
	require.NoError(t, err)
	require.Equal(t, before.AllocatedBytes+3072, during.AllocatedBytes) // 512-byte units
	require.NoError(t, b.Close())
	after, err := GetMemoryStats(0)
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
