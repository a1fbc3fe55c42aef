// SPDX-License-Identifier: Apache-2.0

package main

import (
	"math"
	"strconv"
)

// jsonFloat is a float64 that -json output can always hold. JSON has no NaN or infinity
// (encoding/json refuses them, and a model output may well hold them), so a non-finite value
// is written as a string — "NaN", "+Inf" or "-Inf", as Go's strconv spells them and
// strconv.ParseFloat (or Python's float()) reads them back — and every finite value as a
// number.
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsNaN(v):
		return []byte(`"NaN"`), nil
	case math.IsInf(v, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-Inf"`), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

func (f *jsonFloat) UnmarshalJSON(b []byte) error {
	s := string(b)
	if len(s) >= 2 && s[0] == '"' {
		s = s[1 : len(s)-1]
	}
	v, err := strconv.ParseFloat(s, 64)
	*f = jsonFloat(v)
	return err
}

func jsonFloats(v []float64) []jsonFloat {
	if v == nil {
		return nil
	}
	out := make([]jsonFloat, len(v))
	for i, x := range v {
		out[i] = jsonFloat(x)
	}
	return out
}
