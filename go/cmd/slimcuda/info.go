// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"flag"
	"fmt"

	"github.com/slimcuda/slimcuda/go/slimcuda"
)

// Info is what `slimcuda info -json` prints.
type Info struct {
	Version string       `json:"version"` // libslimcuda's
	Runtime string       `json:"cuda_runtime"`
	Driver  string       `json:"cuda_driver"`
	Devices []DeviceInfo `json:"devices"` // empty without a GPU
}

// DeviceInfo is one CUDA device of Info.
type DeviceInfo struct {
	Index             int    `json:"index"`
	Name              string `json:"name"`
	ComputeCapability string `json:"compute_capability"`
	TotalMemory       uint64 `json:"total_memory_bytes"`
}

var infoCommand = command{
	usageLine: "info [-json]",
	doc:       "Shows the slimcuda version, the CUDA runtime and driver versions and every device.",
	define: func(fs *flag.FlagSet) func(c *cmdContext) error {
		asJSON := fs.Bool("json", false, "print the information as JSON")
		return func(c *cmdContext) error {
			if err := c.args(0, 0, ""); err != nil {
				return err
			}
			return info(c, *asJSON)
		}
	},
}

func info(c *cmdContext, asJSON bool) error {
	runtime, driver, err := slimcuda.CUDAVersions()
	if err != nil {
		return err
	}
	in := Info{Version: slimcuda.Version(), Runtime: runtime, Driver: driver, Devices: []DeviceInfo{}}
	n, err := slimcuda.DeviceCount()
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		p, err := slimcuda.Properties(slimcuda.CUDADevice(i))
		if err != nil {
			return err
		}
		in.Devices = append(in.Devices, DeviceInfo{i, p.Name, p.ComputeCapability, p.TotalMemory})
	}
	if asJSON {
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(in)
	}
	fmt.Fprintf(c.stdout, "slimcuda %s; CUDA runtime %s, driver %s\n", in.Version, in.Runtime, in.Driver)
	if n == 0 {
		fmt.Fprintln(c.stdout, "no GPU: no usable CUDA device (work runs on the CPU path)")
		return nil
	}
	fmt.Fprintf(c.stdout, "%d CUDA device(s):\n", n)
	for _, d := range in.Devices {
		fmt.Fprintf(c.stdout, "  %d: %s, compute capability %s, %.1f GiB\n", d.Index, d.Name, d.ComputeCapability,
			float64(d.TotalMemory)/(1<<30))
	}
	return nil
}
