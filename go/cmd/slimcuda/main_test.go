package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/slimcuda/slimcuda/go/slimcuda"
	"github.com/stretchr/testify/require"
)

func TestInfoReportsRuntimeAndDevices(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"info"}, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "CUDA runtime 13.")
	n, err := slimcuda.DeviceCount()
	require.NoError(t, err)
	if n == 0 {
		require.False(t, os.Getenv("SLIMCUDA_REQUIRE_GPU") == "1", "SLIMCUDA_REQUIRE_GPU=1 but no GPU")
		require.Contains(t, out.String(), "no GPU")
	} else {
		require.Contains(t, out.String(), "0: ")
		require.Contains(t, out.String(), "compute capability")
	}
}

func TestDefaultCommandIsInfo(t *testing.T) {
	var a, b, e bytes.Buffer
	require.Equal(t, 0, run(nil, &a, &e))
	require.Equal(t, 0, run([]string{"info"}, &b, &e))
	require.Equal(t, a.String(), b.String())
}

func TestUsageErrors(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, 2, run([]string{"frobnicate"}, &out, &errOut))
	require.Contains(t, errOut.String(), `unknown command "frobnicate"`)
	errOut.Reset()
	require.Equal(t, 2, run([]string{"info", "extra"}, &out, &errOut))
	require.Contains(t, errOut.String(), "usage: slimcuda info")
	errOut.Reset()
	require.Equal(t, 2, run([]string{"info", "-nosuchflag"}, &out, &errOut))
	out.Reset()
	require.Equal(t, 0, run([]string{"--help"}, &out, &errOut))
	require.True(t, strings.HasPrefix(out.String(), "usage: slimcuda"))
}
