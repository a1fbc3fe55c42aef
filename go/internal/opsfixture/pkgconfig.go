// SPDX-License-Identifier: Apache-2.0

package opsfixture

// Plain `go build`/`go test` links the library installed by tools/install.sh through
// pkg-config. Bazel leaves this file out: there the go_library's cdeps provide it.

// #cgo pkg-config: slimcuda
import "C"
