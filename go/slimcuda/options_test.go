// SPDX-License-Identifier: Apache-2.0

package slimcuda

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// A nil option in any variadic option list is skipped, as a nil CallOption always was.
func TestNilOptionsAreSkipped(t *testing.T) {
	data, err := os.ReadFile(demoPackage(t))
	require.NoError(t, err)
	m, err := LoadBytes(data, nil, LoadOnDevice(CPUDevice), nil)
	require.NoError(t, err)
	require.Equal(t, CPU, m.Device().Type)
	require.NoError(t, m.Close())

	x, err := NewTensor([]int64{2}, Float32, Device{Type: CPU}, nil)
	require.NoError(t, err)
	require.NoError(t, x.Close())

	gpu, _ := DeviceCount()
	b, err := Alloc(16, nil)
	if gpu > 0 {
		require.NoError(t, err)
		require.NoError(t, b.Close())
	} else {
		require.ErrorIs(t, err, ErrNotSupported)
	}
	s, err := NewStream(nil, NonBlocking(), nil)
	if gpu > 0 {
		require.NoError(t, err)
		require.NoError(t, s.Close())
	} else {
		require.ErrorIs(t, err, ErrNotSupported)
	}
}
