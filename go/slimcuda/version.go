// SPDX-License-Identifier: Apache-2.0

package slimcuda

// #include "wrappers.h"
//
// static const char* sc_header_version(void) { return SLIMCUDA_VERSION_STRING; }
import "C"

// Version returns the version of the libslimcuda library this program runs against
// ("MAJOR.MINOR.PATCH", semver; slimcuda_version() in the C ABI). The repository's VERSION
// file is its one source; the library's SONAME carries the major (libslimcuda.so.<major>).
func Version() string { return C.GoString(C.slimcuda_version()) }

// HeaderVersion returns the version of the slimcuda.h this package was compiled against
// (SLIMCUDA_VERSION_STRING). It equals Version unless the library was replaced after the
// build by one with the same SONAME.
func HeaderVersion() string { return C.GoString(C.sc_header_version()) }
