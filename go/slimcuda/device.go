// SPDX-License-Identifier: Apache-2.0

package slimcuda

// #include <stdlib.h>
//
// #include "wrappers.h"
import "C"

import (
	"fmt"
	"unsafe"
)

// DeviceType says where memory lives or work runs.
type DeviceType int32

// The device types (c10's codes).
const (
	CPU  DeviceType = 0
	CUDA DeviceType = 1
)

// A Device is a device type and index: how every function of this package names a device.
// For CUDA the index is a device ordinal, or -1 for the calling thread's current device
// ([CurrentCUDA]); a Go object made on CurrentCUDA (a [DeviceBuffer], a [Stream], a [Model])
// records the device it resolved to. CPU uses index 0 (or -1). Calls that only make sense
// for CUDA (Alloc, NewStream, GetMemoryStats, EmptyCache, Properties) return
// ErrInvalidArgument for any other device.
type Device struct {
	Type  DeviceType
	Index int
}

// CUDADevice is CUDA device index (-1: the current device, as CurrentCUDA).
func CUDADevice(index int) Device { return Device{Type: CUDA, Index: index} }

var (
	// CPUDevice is the host.
	CPUDevice = Device{Type: CPU}
	// CurrentCUDA is the calling thread's current CUDA device, resolved by the call that
	// receives it. It is the default of Alloc, NewStream and LoadOnDevice's CUDA loads.
	CurrentCUDA = Device{Type: CUDA, Index: -1}
)

// String is PyTorch's spelling: "cpu", "cuda:1", and "cuda" for the current CUDA device.
func (d Device) String() string {
	switch {
	case d.Type == CPU:
		return "cpu"
	case d.Type == CUDA && d.Index == -1:
		return "cuda"
	case d.Type == CUDA:
		return fmt.Sprintf("cuda:%d", d.Index)
	}
	return fmt.Sprintf("DeviceType(%d):%d", int32(d.Type), d.Index)
}

// DeviceCount returns the number of usable CUDA devices. Without a GPU or a driver it
// returns 0 and no error.
func DeviceCount() (int, error) {
	r := C.sc_device_count()
	if err := check("DeviceCount", r); err != nil {
		return 0, err
	}
	return int(r.i64), nil
}

// cudaIndex is d's index for a CUDA-only C call: ErrInvalidArgument unless d is a CUDA
// device whose index an int32_t holds. The range (-1 or 0..127) and whether the device
// exists are the C library's checks (check_device_index), the same for Go and C callers.
func cudaIndex(op string, d Device) (C.int32_t, error) {
	if d.Type != CUDA {
		return 0, argError(op, "%v is not a CUDA device", d)
	}
	if d.Index != int(int32(d.Index)) {
		return 0, argError(op, "device index %d out of range", d.Index)
	}
	return C.int32_t(d.Index), nil
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
	Device            Device // resolved: never CurrentCUDA
	Name              string
	TotalMemory       uint64 // bytes
	ComputeCapability string // "9.0"
}

// Properties returns the properties of a CUDA device (CurrentCUDA: the current one).
func Properties(device Device) (DeviceProperties, error) {
	index, err := cudaIndex("Properties", device)
	if err != nil {
		return DeviceProperties{}, err
	}
	const capacity = 256
	name := (*C.char)(C.malloc(capacity))
	defer C.free(unsafe.Pointer(name))
	r := C.sc_device_properties(index, name, capacity)
	if err := check("Properties", r); err != nil {
		return DeviceProperties{}, err
	}
	cc := int(r.i32)
	return DeviceProperties{
		Device:            CUDADevice(int(r.device)),
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

// GetMemoryStats returns the cache's statistics for a CUDA device (CurrentCUDA for the
// current one). ErrNotSupported without a GPU.
func GetMemoryStats(device Device) (MemoryStats, error) {
	index, err := cudaIndex("GetMemoryStats", device)
	if err != nil {
		return MemoryStats{}, err
	}
	var s C.slimcuda_memory_stats
	if err := check("GetMemoryStats", C.sc_memory_stats(index, &s)); err != nil {
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

// EmptyCache returns a CUDA device's cached, unused memory to CUDA (CurrentCUDA: the
// current device's).
func EmptyCache(device Device) error {
	index, err := cudaIndex("EmptyCache", device)
	if err != nil {
		return err
	}
	return check("EmptyCache", C.sc_empty_cache(index))
}
