// SPDX-License-Identifier: Apache-2.0

package rawcuda

// Plain `go build`/`go test`: the installed library's directory holds libcudart too.
// Bazel leaves this file out (cdeps bring libcudart).

// #cgo pkg-config: slimcuda
// #cgo LDFLAGS: -l:libcudart.so.13
import "C"
