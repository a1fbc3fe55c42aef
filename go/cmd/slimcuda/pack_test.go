// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/slimcuda/slimcuda/go/internal/fixture"
	"github.com/slimcuda/slimcuda/go/slimcuda"
	"github.com/stretchr/testify/require"
)

func TestPackWritesALoadablePackage(t *testing.T) {
	dir := t.TempDir()
	// A real (test) model library: pack checks that a library is a well-formed x86-64 ELF.
	src, err := os.ReadFile(fixture.Runfile(t, "SLIMCUDA_TEST_LIBRARY", "models/testing/libconstant_1.so"))
	require.NoError(t, err)
	so := filepath.Join(dir, "m.so")
	require.NoError(t, os.WriteFile(so, src, 0o644))
	manifest := filepath.Join(dir, "m.json")
	require.NoError(t, os.WriteFile(manifest, []byte(`{"libraries": [{"device": "cpu", "so": "m.so", "methods": [
		{"name": "forward", "inputs": [{"name": "x", "dtype": "float32", "sizes": [2], "device": "cpu"}],
		 "outputs": [{"name": "y", "dtype": "float32", "sizes": [2], "device": "cpu"}]}]}]}`), 0o644))
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"pack", manifest}, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "wrote "+filepath.Join(dir, "m.slimcuda"))
	data, err := os.ReadFile(filepath.Join(dir, "m.slimcuda"))
	require.NoError(t, err)
	require.NoError(t, slimcuda.CheckPackage(data))
	errOut.Reset()
	require.Equal(t, 1, run([]string{"pack", "-o", filepath.Join(dir, "x.slimcuda"), filepath.Join(dir, "none.json")}, &out,
		&errOut))
	require.Contains(t, errOut.String(), "NotFound")
	// A library that is not an ELF file is refused at packing time, saying so.
	require.NoError(t, os.WriteFile(so, src[:64], 0o644))
	errOut.Reset()
	require.Equal(t, 1, run([]string{"pack", manifest}, &out, &errOut))
	require.Contains(t, errOut.String(), "past the end")
}
