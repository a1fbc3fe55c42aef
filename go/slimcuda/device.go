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
