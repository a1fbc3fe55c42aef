// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"

	"github.com/slimcuda/slimcuda/go/internal/bench"
	"github.com/slimcuda/slimcuda/go/slimcuda"
)

// BenchRow is one measurement of `slimcuda bench`.
type BenchRow struct {
	What           string    `json:"what"`
	Bytes          int       `json:"bytes"`
	RawMicros      float64   `json:"raw_us"`
	SlimcudaMicros float64   `json:"slimcuda_us"`
	Ratio          jsonFloat `json:"ratio"`
}

var benchCommand = command{
	usageLine: "bench [flags]",
	doc: "Times blocking host<->device copies (pinned memory; without and with a caller stream) and device\n" +
		"allocations through slimcuda against the raw CUDA runtime in this process. ratio = raw / slimcuda\n" +
		"(1.0: the same speed). Needs a GPU. Progress goes to stderr when it is a terminal.",
	define: func(fs *flag.FlagSet) func(c *cmdContext) error {
		iterations := fs.Int("iterations", 200, "operations per round (7 rounds, alternating raw and slimcuda)")
		asJSON := fs.Bool("json", false, "print the rows as JSON (a ratio that is not finite is a string: \"NaN\", \"+Inf\")")
		return func(c *cmdContext) error {
			if err := c.args(0, 0, ""); err != nil {
				return err
			}
			if *iterations <= 0 {
				return c.usageError("-iterations must be positive")
			}
			return runBench(c, *iterations, *asJSON)
		}
	},
}

func runBench(c *cmdContext, iterations int, asJSON bool) error {
	stdout, say := c.stdout, progress(c.stderr)
	n, err := slimcuda.DeviceCount()
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("slimcuda bench: no GPU: there is nothing to measure on this machine")
	}
	var rows []BenchRow
	for _, size := range []int{4, 4 << 10, 1 << 20, 64 << 20} {
		iters := iterations
		if size >= 64<<20 {
			iters = max(1, iters/20)
		}
		for _, c := range []struct {
			name             string
			toDevice, stream bool
		}{{"copy H2D", true, false}, {"copy D2H", false, false}, {"copy H2D, caller stream", true, true},
			{"copy D2H, caller stream", false, true}} {
			say("measuring %s, %d bytes", c.name, size)
			m, err := bench.Copy(size, c.toDevice, c.stream, iters)
			if err != nil {
				return err
			}
			rows = append(rows, BenchRow{c.name, size, roundMs(m.RawMicros), roundMs(m.SlimcudaMicros), jsonFloat(roundRatio(m.Ratio()))})
		}
	}
	for _, size := range []int{4 << 10, 1 << 20} {
		say("measuring device alloc+free, %d bytes", size)
		m, err := bench.Alloc(size, max(1, iterations/10))
		if err != nil {
			return err
		}
		rows = append(rows, BenchRow{"device alloc+free", size, roundMs(m.RawMicros), roundMs(m.SlimcudaMicros),
			jsonFloat(roundRatio(m.Ratio()))})
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	fmt.Fprintf(stdout, "%-26s %10s %12s %12s %7s\n", "operation", "bytes", "raw µs", "slimcuda µs", "ratio")
	for _, r := range rows {
		fmt.Fprintf(stdout, "%-26s %10d %12.2f %12.2f %7.3f\n", r.What, r.Bytes, r.RawMicros, r.SlimcudaMicros, r.Ratio)
	}
	return nil
}

// roundRatio keeps four decimals of a ratio (what the benchmark's noise leaves meaningful);
// the microseconds are rounded as milliseconds are (roundMs: three decimals).
func roundRatio(r float64) float64 { return math.Round(r*1e4) / 1e4 }
