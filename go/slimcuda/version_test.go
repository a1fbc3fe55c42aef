// SPDX-License-Identifier: Apache-2.0

package slimcuda_test

import (
	"regexp"
	"testing"

	"github.com/slimcuda/slimcuda/go/slimcuda"
	"github.com/stretchr/testify/require"
)

func TestVersionIsSemverAndMatchesTheHeaders(t *testing.T) {
	require.Regexp(t, regexp.MustCompile(`^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`), slimcuda.Version())
	require.Equal(t, slimcuda.HeaderVersion(), slimcuda.Version())
}
