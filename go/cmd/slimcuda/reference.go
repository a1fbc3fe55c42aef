// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/slimcuda/slimcuda/go/slimcuda"
)

// A reference is what a run's outputs must equal, value by value (row-major), within
// |got - want| <= atol + rtol*|want|.
type reference struct {
	source     string
	outputs    [][]float64
	atol, rtol float64
}

// ReferenceCheck is the outcome of comparing a run's outputs with a reference (part of the
// summary; a mismatch also makes `slimcuda run` fail).
type ReferenceCheck struct {
	Source     string    `json:"source"`
	Values     int       `json:"values"`
	Differ     int       `json:"values_beyond_tolerance"`
	MaxAbsDiff jsonFloat `json:"max_abs_diff"`
	Atol       float64   `json:"atol"`
	Rtol       float64   `json:"rtol"`
}

// demoReferenceRunfile holds the demo's exact outputs (tools/demo/reference.py, rational
// arithmetic) for the inputs makeInput builds, at several batch sizes.
const demoReferenceRunfile = "testdata/demo_model.json"

// demoReference finds the demo's expected output for `batch` rows of makeInput's inputs:
// $SLIMCUDA_DEMO_MODEL_JSON, else the runfile, else testdata/ below the working directory.
// nil when no file is found or it has no case of that batch (the run is then not checked
// and says so).
func demoReference(batch int64) (*reference, error) {
	path := os.Getenv("SLIMCUDA_DEMO_MODEL_JSON")
	if path == "" {
		if p, ok := installed(filepath.Base(demoReferenceRunfile)); ok {
			path = p
		} else if p, ok := runfile(demoReferenceRunfile); ok {
			path = p
		} else if fileExists(demoReferenceRunfile) {
			path = demoReferenceRunfile
		} else {
			return nil, nil
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, aboutFile("run", path, err)
	}
	var doc struct {
		Cases []struct {
			Name   string    `json:"name"`
			Op     string    `json:"op"`
			Batch  int64     `json:"batch"`
			Layout string    `json:"layout"`
			Expect []float64 `json:"expect_output"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("slimcuda run: %s: %v", path, err)
	}
	for _, c := range doc.Cases {
		// The same inputs whatever the device: the first contiguous run case of this batch.
		if c.Op == "run" && c.Batch == batch && c.Layout == "contiguous" && len(c.Expect) > 0 {
			// The fixture's own tolerance ("compare exactly or within 1e-6").
			return &reference{source: fmt.Sprintf("%s (case %s)", filepath.Base(path), c.Name),
				outputs: [][]float64{c.Expect}, atol: 1e-6, rtol: 1e-6}, nil
		}
	}
	return nil, nil
}

// expectedFromFiles reads -expect: one .npy per output (a comma-separated list, or
// DIR/expected_<i>.npy), each read on the CPU as float64 values.
func expectedFromFiles(value string, n int, atol, rtol float64) (*reference, error) {
	files, err := npyFiles("-expect", value, "expected", n)
	if err != nil {
		return nil, err
	}
	ref := &reference{source: value, atol: atol, rtol: rtol}
	for _, f := range files {
		t, err := readNPY(f, slimcuda.CPUDevice)
		if err != nil {
			return nil, err
		}
		info, err := t.Info()
		if err == nil {
			values := make([]float64, info.Numel)
			if err = slimcuda.CopyToHost(t, values); err == nil {
				ref.outputs = append(ref.outputs, values)
			}
		}
		t.Close()
		if err != nil {
			return nil, aboutFile("run", f, err)
		}
	}
	return ref, nil
}

// compare checks outputs (each output's values, row-major) against ref.
func (ref *reference) compare(outputs [][]float64) (ReferenceCheck, error) {
	check := ReferenceCheck{Source: ref.source, Atol: ref.atol, Rtol: ref.rtol}
	if len(outputs) != len(ref.outputs) {
		return check, fmt.Errorf("slimcuda run: the model gave %d output(s); the reference %s has %d",
			len(outputs), ref.source, len(ref.outputs))
	}
	maxDiff := 0.0
	first := ""
	for i, got := range outputs {
		want := ref.outputs[i]
		if len(got) != len(want) {
			return check, fmt.Errorf("slimcuda run: output %d has %d values; the reference %s has %d",
				i, len(got), ref.source, len(want))
		}
		for k := range got {
			d := math.Abs(got[k] - want[k])
			if math.IsNaN(got[k]) != math.IsNaN(want[k]) || (!math.IsNaN(d) && d > ref.atol+ref.rtol*math.Abs(want[k])) {
				check.Differ++
				if first == "" {
					first = fmt.Sprintf("output %d value %d is %g, want %g", i, k, got[k], want[k])
				}
			}
			if !math.IsNaN(d) {
				maxDiff = math.Max(maxDiff, d)
			}
		}
		check.Values += len(got)
	}
	check.MaxAbsDiff = jsonFloat(maxDiff)
	if check.Differ > 0 {
		return check, fmt.Errorf("slimcuda run: %d of %d values differ from the reference %s beyond atol %g, rtol %g "+
			"(first: %s)", check.Differ, check.Values, ref.source, ref.atol, ref.rtol, first)
	}
	return check, nil
}
