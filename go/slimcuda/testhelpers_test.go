package slimcuda

import "unsafe"

// pointerOf returns the address of a Go slice's first element, for handing the C ABI a
// host pointer it must refuse (it never dereferences it).
func pointerOf(s []float32) unsafe.Pointer { return unsafe.Pointer(&s[0]) }
