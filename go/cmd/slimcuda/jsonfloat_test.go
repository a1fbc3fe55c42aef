// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// -json stays JSON when values are not finite: NaN and infinities become strings.
func TestJSONFloatsStayValidJSON(t *testing.T) {
	data, err := json.Marshal(TensorSummary{Min: jsonFloat(math.Inf(-1)), Max: jsonFloat(math.Inf(1)),
		Sum: jsonFloat(math.NaN()), Values: jsonFloats([]float64{1.5, math.NaN()})})
	require.NoError(t, err)
	require.Contains(t, string(data), `"min":"-Inf","max":"+Inf","sum":"NaN","values":[1.5,"NaN"]`)
	var back TensorSummary
	require.NoError(t, json.Unmarshal(data, &back))
	require.True(t, math.IsInf(float64(back.Min), -1))
	require.True(t, math.IsNaN(float64(back.Values[1])))
}
