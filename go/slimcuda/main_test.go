package slimcuda

import (
	"fmt"
	"os"
	"testing"

	"github.com/slimcuda/slimcuda/go/internal/fixture"
)

// fx owns the fixture files this package's tests must cover in full.
var fx *fixture.Suite

func TestMain(m *testing.M) {
	n, err := DeviceCount()
	if err != nil {
		fmt.Fprintln(os.Stderr, "DeviceCount:", err)
		os.Exit(1)
	}
	fx = fixture.NewSuite(n, "allocator.json", "caller_stream.json", "demo_model.json", "kernels.json",
		"multi_gpu.json", "packages.json", "tensor.json")
	code := m.Run()
	if err := fx.Verify(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// requireGPU skips t without a GPU, or fails it under SLIMCUDA_REQUIRE_GPU=1.
func requireGPU(t testing.TB) {
	t.Helper()
	n, err := DeviceCount()
	if err == nil && n > 0 {
		return
	}
	if os.Getenv("SLIMCUDA_REQUIRE_GPU") == "1" {
		t.Fatalf("SLIMCUDA_REQUIRE_GPU=1 but no CUDA device is usable (%v)", err)
	}
	t.Skip("no CUDA device")
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
