package slimcuda

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Nil receivers of the accessor methods give documented zero results, not panics.
func TestNilReceiversGiveZeroResults(t *testing.T) {
	var m *Model
	require.Equal(t, Device{}, m.Device())
	require.Nil(t, m.Inputs())
	require.Nil(t, m.Outputs())
	var b *DeviceBuffer
	require.Equal(t, 0, b.Len())
	require.Equal(t, 0, b.Device())
	require.Nil(t, b.Pointer())
}
