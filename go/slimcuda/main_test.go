// SPDX-License-Identifier: Apache-2.0

package slimcuda

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"unsafe"

	"github.com/slimcuda/slimcuda/go/internal/fixture"
	"github.com/stretchr/testify/require"
)

// fx owns the fixture files this package's tests must cover in full.
var fx *fixture.Suite

func TestMain(m *testing.M) {
	if variant := os.Getenv("SLIMCUDA_STICKY_CHILD"); variant != "" {
		os.Exit(stickyChild(variant)) // decode_test.go: one fault in a process of its own
	}
	if os.Getenv("SLIMCUDA_CONFIG_CHILD") != "" {
		os.Exit(configChild()) // config_test.go: the library's first read of its settings
	}
	if os.Getenv("SLIMCUDA_HOSTILE_FILE") != "" {
		os.Exit(hostileChild()) // hostile_test.go: one load, measured in a process of its own
	}
	n, err := DeviceCount()
	if err != nil {
		fmt.Fprintln(os.Stderr, "DeviceCount:", err)
		os.Exit(1)
	}
	fx = fixture.NewSuite(n, "allocator.json", "caller_stream.json", "demo_model.json", "kernels.json",
		"multi_gpu.json", "packages.json", "pt2.json", "pt2_versions.json", "tensor.json", "hostile_pt2.json",
		"cpu_zoo.json")
	code := m.Run()
	if err := fx.Verify(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	if fixture.SelectsAll() && packageInputsChecked.Load() == 0 {
		fmt.Fprintln(os.Stderr, "FuzzCheckPackage checked no seed: this test main runs no fuzz targets")
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// requireGPU skips t without a GPU (fixture.NeedsGPU), or fails it under
// SLIMCUDA_REQUIRE_GPU=1.
func requireGPU(t testing.TB) {
	t.Helper()
	n, err := DeviceCount()
	if err == nil && n > 0 {
		return
	}
	if os.Getenv("SLIMCUDA_REQUIRE_GPU") == "1" {
		t.Fatalf("SLIMCUDA_REQUIRE_GPU=1 but no CUDA device is usable (%v)", err)
	}
	if err != nil {
		t.Skipf("%s (%v)", fixture.NeedsGPU, err)
	}
	t.Skip(fixture.NeedsGPU)
}

// expectCode checks err against a fixture's "expect" (and optional "message") fields.
func expectCode(t *testing.T, c fixture.Case, err error) {
	t.Helper()
	var want string
	c.Get(t, "expect", &want)
	code, ok := CodeByName(want)
	if !ok {
		t.Fatalf("unknown error name %q", want)
	}
	if code == 0 {
		if err != nil {
			t.Fatalf("want success, got %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("want %s, got success", want)
	}
	if !errorIs(err, code) {
		t.Fatalf("want %s, got %v", want, err)
	}
	var msg string
	if c.GetOr(t, "message", &msg) && !containsMessage(err, msg) {
		t.Fatalf("error %q does not mention %q", err, msg)
	}
}

// requireTwoGPUs skips t on fewer than two GPUs (fixture.NeedsTwoGPUs), or fails it under
// SLIMCUDA_REQUIRE_GPUS=2.
func requireTwoGPUs(t *testing.T) {
	t.Helper()
	count, err := DeviceCount()
	require.NoError(t, err)
	if count >= 2 {
		return
	}
	if want, _ := strconv.Atoi(os.Getenv("SLIMCUDA_REQUIRE_GPUS")); want >= 2 {
		t.Fatalf("SLIMCUDA_REQUIRE_GPUS=%d but %d GPU(s)", want, count)
	}
	t.Skipf("%s (found %d)", fixture.NeedsTwoGPUs, count)
}

// pointerOf returns the address of a Go slice's first element, for handing the C ABI a
// host pointer it must refuse (it never dereferences it).
func pointerOf(s []float32) unsafe.Pointer { return unsafe.Pointer(&s[0]) }

// fakeHandle makes a stand-in stream handle from a number: the library stores and compares
// it, never dereferences it. Keep values small: far below the Go heap.
func fakeHandle(v uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&v)) }
