// SPDX-License-Identifier: Apache-2.0

// goapp: a Go program outside the slimcuda module, built with plain `go build` against the
// installed library (pkg-config), that loads a model package and runs it.
//
// Usage: goapp PACKAGE EXPECTED_JSON — runs the demo package on its reference input
// (batch 4) and compares with case run_cpu_batch_4 of EXPECTED_JSON (testdata/demo_model.json).
package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"

	"github.com/slimcuda/slimcuda/go/slimcuda"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "goapp:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) != 3 {
		return fmt.Errorf("usage: goapp PACKAGE EXPECTED_JSON")
	}
	var doc struct {
		Cases []struct {
			Name   string    `json:"name"`
			Input  []float32 `json:"input"`
			Expect []float32 `json:"expect_output"`
		} `json:"cases"`
	}
	data, err := os.ReadFile(os.Args[2])
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return err
	}
	var input, want []float32
	for _, c := range doc.Cases {
		if c.Name == "run_cpu_batch_4" {
			input, want = c.Input, c.Expect
		}
	}
	model, err := slimcuda.Load(os.Args[1]) // CUDA when there is a GPU, else CPU
	if err != nil {
		return err
	}
	defer model.Close()
	x, err := slimcuda.NewTensor([]int64{4, 16}, slimcuda.Float32, model.Device())
	if err != nil {
		return err
	}
	defer x.Close()
	if err := slimcuda.CopyFromHost(x, input); err != nil {
		return err
	}
	out, err := model.Run([]*slimcuda.Tensor{x})
	if err != nil {
		return err
	}
	defer out[0].Close()
	got := make([]float32, len(want))
	if err := slimcuda.CopyToHost(out[0], got); err != nil {
		return err
	}
	for i := range want {
		if math.Abs(float64(got[i]-want[i])) > 1e-6 {
			return fmt.Errorf("output %d: %v, want %v", i, got[i], want[i])
		}
	}
	fmt.Printf("goapp: %s on %s: %d outputs match the reference\n", os.Args[1], model.Device(), len(want))
	return nil
}
