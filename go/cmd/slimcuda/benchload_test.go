// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBenchLoad(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"bench-load", "-n", "3", "-json", pt2Fixture(t, "real_cpu_linear.pt2")}, &out,
		&errOut), errOut.String())
	var r LoadTimes
	require.NoError(t, json.Unmarshal(out.Bytes(), &r))
	require.Equal(t, 3, r.Loads)
	require.Len(t, r.AllMillis, 3)
	require.Equal(t, "cpu", r.Device)
	require.Greater(t, r.FileBytes, int64(100000))
	require.Greater(t, r.MinMillis, 0.0)
	require.LessOrEqual(t, r.MinMillis, r.MedMillis)
	errOut.Reset()
	require.Equal(t, 1, run([]string{"bench-load", pt2Fixture(t, "zip_bomb.pt2")}, &out, &errOut))
	require.Contains(t, errOut.String(), "zip bomb")
}
