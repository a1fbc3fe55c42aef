// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/slimcuda/slimcuda/go/slimcuda"
)

// LoadTimes is what `slimcuda bench-load` reports (also as JSON with -json).
type LoadTimes struct {
	Model      string    `json:"model"`
	Device     string    `json:"device"`
	FileBytes  int64     `json:"file_bytes"`
	Loads      int       `json:"loads"`
	MinMillis  float64   `json:"min_ms"`
	MedMillis  float64   `json:"median_ms"`
	MeanMillis float64   `json:"mean_ms"`
	AllMillis  []float64 `json:"all_ms"`
}

var benchLoadCommand = command{
	usageLine: "bench-load [flags] MODEL",
	doc: "Times slimcuda.Load of MODEL (a .pt2 or a package): -n loads one after another, each closed before the\n" +
		"next, from the file each time (the page cache keeps it warm after the first). To compare with PyTorch,\n" +
		"time torch._inductor.aoti_load_package on the same file in the same session (docs/pt2.md).",
	define: func(fs *flag.FlagSet) func(c *cmdContext) error {
		n := fs.Int("n", 10, "loads to time (at least 1)")
		device := fs.String("device", "auto", "auto, cpu or cuda")
		modelName := fs.String("model-name", "", "which model of a .pt2 holding several")
		asJSON := fs.Bool("json", false, "print the timings as JSON")
		return func(c *cmdContext) error {
			if err := c.args(1, 1, "MODEL"); err != nil {
				return err
			}
			if *n < 1 {
				return c.usageError("-n must be >= 1, not %d", *n)
			}
			opts, err := loadOptions(c, *device, *modelName)
			if err != nil {
				return err
			}
			return benchLoad(c, userPath(c.fs.Arg(0)), *n, opts, *asJSON)
		}
	},
}

func benchLoad(c *cmdContext, path string, n int, opts []slimcuda.LoadOption, asJSON bool) error {
	r := LoadTimes{Model: path, Loads: n}
	if st, err := os.Stat(path); err == nil {
		r.FileBytes = st.Size()
	}
	say := progress(c.stderr)
	total := 0.0
	for i := 0; i < n; i++ {
		say("load %d of %d", i+1, n)
		start := time.Now()
		m, err := slimcuda.Load(path, opts...)
		elapsed := ms(time.Since(start))
		if err != nil {
			return err
		}
		r.Device = m.Device().String()
		if err := m.Close(); err != nil {
			return err
		}
		r.AllMillis = append(r.AllMillis, elapsed)
		total += elapsed
	}
	sorted := append([]float64(nil), r.AllMillis...)
	sort.Float64s(sorted)
	r.MinMillis, r.MedMillis, r.MeanMillis = sorted[0], sorted[len(sorted)/2], roundMs(total/float64(n))
	if asJSON {
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	fmt.Fprintf(c.stdout, "%s (%d bytes) on %s: %d loads, min %.2f ms, median %.2f ms, mean %.2f ms\n", r.Model,
		r.FileBytes, r.Device, r.Loads, r.MinMillis, r.MedMillis, r.MeanMillis)
	return nil
}
