// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slimcuda/slimcuda/go/internal/fixture"
	"github.com/slimcuda/slimcuda/go/slimcuda"
	"github.com/stretchr/testify/require"
)

func TestInfoReportsRuntimeAndDevices(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"info"}, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "CUDA runtime 13.")
	if gpu(t) {
		require.Contains(t, out.String(), "0: ")
		require.Contains(t, out.String(), "compute capability")
	} else {
		require.Contains(t, out.String(), "no GPU")
	}
}

func TestInfoJSON(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"info", "-json"}, &out, &errOut), errOut.String())
	var in Info
	require.NoError(t, json.Unmarshal(out.Bytes(), &in))
	require.Equal(t, slimcuda.Version(), in.Version)
	require.True(t, strings.HasPrefix(in.Runtime, "13."), in.Runtime)
	require.NotNil(t, in.Devices)
	if !gpu(t) {
		require.Empty(t, in.Devices)
	}
}

func TestInfoDescribesAModel(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"info", pt2Fixture(t, "real_cpu_linear.pt2")}, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "on cpu, 1 instance(s)")
	require.Contains(t, out.String(), "input 0 arg2_1: float32 [2 4] static")
	require.Contains(t, out.String(), "output 0 output0: float32 [2 3] static")
	out.Reset()
	require.Equal(t, 0, run([]string{"info", "-json", pt2Fixture(t, "valid.pt2")}, &out, &errOut), errOut.String())
	var in Info
	require.NoError(t, json.Unmarshal(out.Bytes(), &in))
	require.NotNil(t, in.ModelInfo)
	require.Equal(t, "cpu", in.Device, "a .pt2 whose wrapper states no counts: from its load")
	require.True(t, in.Loaded)
	require.Len(t, in.Inputs, 1)
	require.Equal(t, []int64{1}, in.Inputs[0].Sizes)
	// The specs in the JSON's own lower-case keys, beside the model's path under "model" (as
	// run and bench-load name it); what the file does not state is "unknown".
	out.Reset()
	require.Equal(t, 0, run([]string{"info", "-json", pt2Fixture(t, "real_cpu_linear.pt2")}, &out, &errOut))
	var raw map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &raw))
	require.Equal(t, pt2Fixture(t, "real_cpu_linear.pt2"), raw["model"])
	require.Equal(t, map[string]any{"name": "arg2_1", "dtype": "float32", "sizes": []any{2.0, 4.0},
		"dynamism": "static", "device": "cpu"}, raw["inputs"].([]any)[0])
	require.Equal(t, map[string]any{"name": "output0", "dtype": "float32", "sizes": []any{2.0, 3.0},
		"dynamism": "static", "device": "cpu"}, raw["outputs"].([]any)[0])
	require.Equal(t, []any{}, raw["state"], "a linear layer's weights are read-only")
	require.Greater(t, raw["constants"], 0.0)
	require.NotContains(t, out.String(), "state:")
}

func TestInfoNamesAModelsState(t *testing.T) {
	var out, errOut bytes.Buffer
	pkg := filepath.Join(os.Getenv("SLIMCUDA_TEST_MODELS_DIR"), "stateful.slimcuda")
	if os.Getenv("SLIMCUDA_TEST_MODELS_DIR") == "" {
		pkg = fixture.Runfile(t, "SLIMCUDA_TEST_MODELS_DIR", "models/testing/stateful.slimcuda")
	}
	require.Equal(t, 0, run([]string{"info", pkg}, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "1 instance(s)")
	require.Contains(t, out.String(), "state: 2 of its 3 constants are written by its runs")
	require.Contains(t, out.String(), ": counter, table")
}
