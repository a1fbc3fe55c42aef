// SPDX-License-Identifier: Apache-2.0

//go:build !cgo

package slimcuda

// Package slimcuda calls libslimcuda.so through cgo, so it cannot be built without it
// (CGO_ENABLED=0, or cross-compiling, where the go command turns cgo off). The other
// files that need cgo are left out of such a build, so that the compiler's one error is
// this undefined name, which says what to do, rather than "undefined: Stream".
var _ = slimcuda_requires_cgo__build_with_CGO_ENABLED_1_and_a_C_compiler
