package slimcuda

// #include "wrappers.h"
import "C"

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
