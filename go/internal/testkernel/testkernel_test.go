// SPDX-License-Identifier: Apache-2.0

package testkernel

import (
	"os"
	"testing"

	"github.com/slimcuda/slimcuda/go/internal/fixture"
	"github.com/slimcuda/slimcuda/go/internal/helpertest"
	"github.com/stretchr/testify/require"
)

// A missing kernel skips only where no GPU is required.
func TestRequireFailsWhereAGPUIsRequired(t *testing.T) {
	for _, tc := range []struct {
		description     string
		requireGPU      string
		available       bool
		failed, skipped bool
	}{
		{"linked", "1", true, false, false},
		{"linked, plain", "", true, false, false},
		{"missing, GPU required", "1", false, true, false},
		{"missing, plain go test", "", false, false, true},
	} {
		t.Run(tc.description, func(t *testing.T) {
			t.Setenv("SLIMCUDA_REQUIRE_GPU", tc.requireGPU)
			got := helpertest.Run(t, func(tb testing.TB) { requireLinked(tb, tc.available) })
			require.Equal(t, tc.failed, got.Failed, got.String())
			require.Equal(t, tc.skipped, got.Skipped, got.String())
			if tc.skipped {
				require.Equal(t, []string{SkipReason}, got.Messages)
			}
		})
	}
}

// Bazel links the kernel into every binary that depends on this package.
func TestLinkedUnderBazel(t *testing.T) {
	if os.Getenv("TEST_SRCDIR") == "" && !fixture.GPURequired() {
		t.Skip("plain go test: " + SkipReason)
	}
	require.True(t, Available())
}
