package slimcuda

import "unsafe"

// pointerOf returns the address of a Go slice's first element, for handing the C ABI a
// host pointer it must refuse (it never dereferences it).
func pointerOf(s []float32) unsafe.Pointer { return unsafe.Pointer(&s[0]) }

// fakeHandle makes a stand-in stream handle from a number: the library stores and compares
// it, never dereferences it. Keep values small: far below the Go heap.
func fakeHandle(v uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&v)) }
