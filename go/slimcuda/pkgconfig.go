// SPDX-License-Identifier: Apache-2.0

package slimcuda

// Plain `go build` links the library installed by tools/install.sh through pkg-config.
// Bazel leaves this file out: there the go_library's cdeps provide libslimcuda.so.

// #cgo pkg-config: slimcuda
import "C"
