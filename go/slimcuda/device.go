package slimcuda

// #include <stdlib.h>
//
// #include "wrappers.h"
import "C"

import (
	"fmt"
	"unsafe"
)

// CurrentDevice, as a device index, means the calling thread's current CUDA device.
const CurrentDevice = -1

// DeviceCount returns the number of usable CUDA devices. Without a GPU or a driver it
// returns 0 and no error.
func DeviceCount() (int, error) {
	r := C.sc_device_count()
	if err := check("DeviceCount", r); err != nil {
		return 0, err
	}
	return int(r.i64), nil
}

// checkDevice rejects indices the C ABI cannot represent before they are narrowed.
func checkDevice(op string, device int) error {
	if device < CurrentDevice || device > 127 {
		return argError(op, "device index %d out of range", device)
	}
	return nil
}

// CUDAVersions returns the CUDA runtime version libslimcuda runs with and the driver's, as
// "13.0"; driver is "none" when no driver is installed.
func CUDAVersions() (runtime, driver string, err error) {
	r := C.sc_cuda_versions()
	if err := check("CUDAVersions", r); err != nil {
		return "", "", err
	}
	format := func(v int64) string {
		if v == 0 {
			return "none"
		}
		return fmt.Sprintf("%d.%d", v/1000, v%1000/10)
	}
	return format(int64(r.i64 >> 32)), format(int64(uint32(r.i64))), nil
}

// DeviceProperties describes one CUDA device.
type DeviceProperties struct {
	Index             int
	Name              string
	TotalMemory       uint64 // bytes
	ComputeCapability string // "9.0"
}

// Properties returns the properties of device index (CurrentDevice for the current one).
func Properties(index int) (DeviceProperties, error) {
	if err := checkDevice("Properties", index); err != nil {
		return DeviceProperties{}, err
	}
	const capacity = 256
	name := (*C.char)(C.malloc(capacity))
	defer C.free(unsafe.Pointer(name))
	r := C.sc_device_properties(C.int32_t(index), name, capacity)
	if err := check("Properties", r); err != nil {
		return DeviceProperties{}, err
	}
	cc := int(uintptr(r.ptr))
	return DeviceProperties{
		Index:             index,
		Name:              C.GoString(name),
		TotalMemory:       uint64(r.i64),
		ComputeCapability: fmt.Sprintf("%d.%d", cc/10, cc%10),
	}, nil
}

// MemoryStats is the device memory cache's accounting for one GPU (see slimcuda.h).
type MemoryStats struct {
	AllocatedBytes, PeakAllocatedBytes uint64 // handed out and not yet freed
	ReservedBytes, PeakReservedBytes   uint64 // held from CUDA: allocated + cached
	Allocations, Frees                 uint64
	CacheHits, CacheMisses             uint64
	Segments                           uint64 // cudaMalloc'ed segments held
	OOMRetries                         uint64 // allocations retried after emptying the cache
}

// GetMemoryStats returns the cache's statistics for device (CurrentDevice for the current
// one). ErrNotSupported without a GPU.
func GetMemoryStats(device int) (MemoryStats, error) {
	if err := checkDevice("GetMemoryStats", device); err != nil {
		return MemoryStats{}, err
	}
	var s C.slimcuda_memory_stats
	if err := check("GetMemoryStats", C.sc_memory_stats(C.int32_t(device), &s)); err != nil {
		return MemoryStats{}, err
	}
	return memoryStats(&s), nil
}

// GetPinnedMemoryStats returns the statistics of the cached pinned host pool (pinned
// tensors; one pool shared by all GPUs). ErrNotSupported without a GPU.
func GetPinnedMemoryStats() (MemoryStats, error) {
	var s C.slimcuda_memory_stats
	if err := check("GetPinnedMemoryStats", C.sc_pinned_memory_stats(&s)); err != nil {
		return MemoryStats{}, err
	}
	return memoryStats(&s), nil
}

// EmptyPinnedCache returns cached, unused pinned host memory to CUDA.
func EmptyPinnedCache() error { return check("EmptyPinnedCache", C.sc_pinned_empty_cache()) }

func memoryStats(s *C.slimcuda_memory_stats) MemoryStats {
	return MemoryStats{
		AllocatedBytes: uint64(s.allocated_bytes), PeakAllocatedBytes: uint64(s.peak_allocated_bytes),
		ReservedBytes: uint64(s.reserved_bytes), PeakReservedBytes: uint64(s.peak_reserved_bytes),
		Allocations: uint64(s.allocations), Frees: uint64(s.frees),
		CacheHits: uint64(s.cache_hits), CacheMisses: uint64(s.cache_misses),
		Segments: uint64(s.segments), OOMRetries: uint64(s.oom_retries),
	}
}

// EmptyCache returns device's cached, unused memory to CUDA.
func EmptyCache(device int) error {
	if err := checkDevice("EmptyCache", device); err != nil {
		return err
	}
	return check("EmptyCache", C.sc_empty_cache(C.int32_t(device)))
}
