// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBench(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run([]string{"bench", "-iterations", "20", "-json"}, &out, &errOut)
	if !gpu(t) {
		require.Equal(t, 1, code)
		require.Contains(t, errOut.String(), "no GPU")
		return
	}
	require.Equal(t, 0, code, errOut.String())
	var rows []BenchRow
	require.NoError(t, json.Unmarshal(out.Bytes(), &rows))
	require.Len(t, rows, 18)
	for _, r := range rows {
		require.Greater(t, r.RawMicros, 0.0, r.What)
		require.Greater(t, r.SlimcudaMicros, 0.0, r.What)
	}
}
