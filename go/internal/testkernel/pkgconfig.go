// SPDX-License-Identifier: Apache-2.0

package testkernel

// Plain `go build`/`go test` links the installed library through pkg-config (the spin
// kernel stays unresolved: see the package documentation). Bazel leaves this file out.

// #cgo pkg-config: slimcuda
import "C"
