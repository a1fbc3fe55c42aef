// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"strings"

	"github.com/slimcuda/slimcuda/go/slimcuda"
)

// Info is what `slimcuda info -json` prints.
type Info struct {
	Version string       `json:"version"` // libslimcuda's
	Runtime string       `json:"cuda_runtime"`
	Driver  string       `json:"cuda_driver"`
	Devices []DeviceInfo `json:"devices"` // empty without a GPU
	Model   *ModelInfo   `json:"model,omitempty"`
}

// ModelInfo is what `slimcuda info MODEL` adds: the loaded model's device and I/O specs.
type ModelInfo struct {
	Path      string     `json:"path"`
	Device    string     `json:"device"`
	Instances int        `json:"instances"`
	Constants int        `json:"constants"` // the weights and buffers the library shows
	State     []string   `json:"state"`     // the constants runs write (one copy per load)
	Inputs    []SpecInfo `json:"inputs"`
	Outputs   []SpecInfo `json:"outputs"`
}

// SpecInfo is one declared input or output of ModelInfo, named as the text output names
// it (and as run -json names dtypes): "float32", "dynamic-bounded", "cuda". An input or
// output the model file says nothing about has dtype and dynamism "unknown" and no sizes.
type SpecInfo struct {
	Name     string  `json:"name"`
	DType    string  `json:"dtype"`
	Sizes    []int64 `json:"sizes"` // exact, or upper bounds when dynamic-bounded
	Dynamism string  `json:"dynamism"`
	Device   string  `json:"device"` // "cuda": the model's GPU
}

func specInfos(specs []slimcuda.TensorSpec) []SpecInfo {
	out := make([]SpecInfo, len(specs))
	for i, s := range specs {
		out[i] = SpecInfo{Name: s.Name, DType: s.DType.String(), Sizes: append([]int64{}, s.Sizes...),
			Dynamism: s.Dynamism.String(), Device: s.Device.String()}
		if s.Dynamism == slimcuda.UnknownSpec {
			out[i].DType, out[i].Sizes = "unknown", []int64{}
		}
	}
	return out
}

// DeviceInfo is one CUDA device of Info.
type DeviceInfo struct {
	Index             int    `json:"index"`
	Name              string `json:"name"`
	ComputeCapability string `json:"compute_capability"`
	TotalMemory       uint64 `json:"total_memory_bytes"`
}

var infoCommand = command{
	usageLine: "info [-json] [MODEL]",
	doc: "Shows the slimcuda version, the CUDA runtime and driver versions and every device; with MODEL (a\n" +
		".pt2 or a package), also the device it loads on and its inputs and outputs as the file states them\n" +
		"(\"unknown\": the file does not say).",
	define: func(fs *flag.FlagSet) func(c *cmdContext) error {
		asJSON := fs.Bool("json", false, "print the information as JSON")
		device := fs.String("device", "auto", "MODEL's device: auto, cpu or cuda (needs MODEL)")
		modelName := fs.String("model-name", "", "which model of a .pt2 holding several (needs MODEL)")
		return func(c *cmdContext) error {
			if err := c.args(0, 1, "[MODEL]"); err != nil {
				return err
			}
			if c.fs.NArg() == 0 {
				var err error
				c.fs.Visit(func(f *flag.Flag) {
					if err == nil && (f.Name == "device" || f.Name == "model-name") {
						err = c.usageError("-%s needs a MODEL (it says how to load one)", f.Name)
					}
				})
				if err != nil {
					return err
				}
			}
			return info(c, *asJSON, userPath(c.fs.Arg(0)), *device, *modelName)
		}
	},
}

func info(c *cmdContext, asJSON bool, model, device, modelName string) error {
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
	if model != "" {
		opts, err := loadOptions(c, device, modelName)
		if err != nil {
			return err
		}
		m, err := slimcuda.Load(model, opts...)
		if err != nil {
			return err
		}
		in.Model = &ModelInfo{Path: model, Device: m.Device().String(), Instances: m.Instances(),
			Constants: len(m.Constants()), State: []string{}, Inputs: specInfos(m.Inputs()),
			Outputs: specInfos(m.Outputs())}
		for _, k := range m.Constants() {
			if k.State {
				in.Model.State = append(in.Model.State, k.Name)
			}
		}
		if err := m.Close(); err != nil {
			return err
		}
	}
	if asJSON {
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(in)
	}
	fmt.Fprintf(c.stdout, "slimcuda %s; CUDA runtime %s, driver %s\n", in.Version, in.Runtime, in.Driver)
	if in.Model != nil {
		defer printModel(c, in.Model)
	}
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

func printModel(c *cmdContext, m *ModelInfo) {
	fmt.Fprintf(c.stdout, "%s: on %s, %d instance(s)\n", m.Path, m.Device, m.Instances)
	if len(m.State) > 0 {
		fmt.Fprintf(c.stdout, "  state: %d of its %d constants are written by its runs (one copy per load, one call "+
			"at a time): %s\n", len(m.State), m.Constants, strings.Join(m.State, ", "))
	}
	for k, specs := range [][]SpecInfo{m.Inputs, m.Outputs} {
		for i, s := range specs {
			kind := [2]string{"input", "output"}[k]
			if s.Dynamism == slimcuda.UnknownSpec.String() {
				fmt.Fprintf(c.stdout, "  %s %d %s: unknown (the file does not state it)\n", kind, i, s.Name)
				continue
			}
			fmt.Fprintf(c.stdout, "  %s %d %s: %s %v %s\n", kind, i, s.Name, s.DType, s.Sizes, s.Dynamism)
		}
	}
}
