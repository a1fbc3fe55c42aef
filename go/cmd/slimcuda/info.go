// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/slimcuda/slimcuda/go/slimcuda"
)

// Info is what `slimcuda info -json` prints; with MODEL, its description too.
type Info struct {
	Version    string       `json:"version"` // libslimcuda's
	Runtime    string       `json:"cuda_runtime"`
	Driver     string       `json:"cuda_driver"`
	Devices    []DeviceInfo `json:"devices"` // empty without a GPU
	*ModelInfo              // with MODEL
}

// ModelInfo is what `slimcuda info MODEL` adds, in the keys `run` and `bench-load` use for
// the same things ("model": the path, "device": where it runs). Its device, libraries and
// I/O specs come from the file without loading it (slimcuda.Describe); instances,
// constants and state from a load, made only when the model's device is here and -no-load
// is not given (Loaded says whether).
type ModelInfo struct {
	Path      string     `json:"model"`
	Device    string     `json:"device"`    // the device type it loads on: "cpu" or "cuda"
	Libraries []string   `json:"libraries"` // the device types it has libraries for
	Loaded    bool       `json:"loaded"`
	Instances int        `json:"instances,omitempty"`
	Constants int        `json:"constants,omitempty"` // the weights and buffers the library shows
	State     []string   `json:"state"`               // the constants runs write (null: not loaded)
	Inputs    []SpecInfo `json:"inputs"`
	Outputs   []SpecInfo `json:"outputs"`
}

// SpecInfo is one declared input or output of ModelInfo, in the words a manifest uses
// (`slimcuda pack` reads them back): dtype "float32", dynamism "static", "dynamic_bounded"
// or "dynamic_unbounded", device "cpu" or "cuda". What the model file says nothing about is
// "unknown", with no sizes.
type SpecInfo struct {
	Name     string  `json:"name"`
	DType    string  `json:"dtype"`
	Sizes    []int64 `json:"sizes"` // exact, or upper bounds when dynamic_bounded
	Dynamism string  `json:"dynamism"`
	Device   string  `json:"device"` // "cuda": the model's GPU
}

// dynamismName spells a dynamism as manifests do (csrc/package/manifest.h).
func dynamismName(d slimcuda.Dynamism) string {
	switch d {
	case slimcuda.Static:
		return "static"
	case slimcuda.DynamicBounded:
		return "dynamic_bounded"
	case slimcuda.DynamicUnbounded:
		return "dynamic_unbounded"
	case slimcuda.UnknownSpec:
		return "unknown"
	case slimcuda.ObservedSpec:
		return "observed"
	}
	return fmt.Sprintf("dynamism %d", int32(d))
}

func specInfos(specs []slimcuda.TensorSpec) []SpecInfo {
	out := make([]SpecInfo, len(specs))
	for i, s := range specs {
		out[i] = SpecInfo{Name: s.Name, DType: s.DType.String(), Sizes: append([]int64{}, s.Sizes...),
			Dynamism: dynamismName(s.Dynamism), Device: deviceTypeName(s.Device.Type)}
		if s.Dynamism == slimcuda.UnknownSpec {
			out[i].DType, out[i].Sizes = "unknown", []int64{}
		}
	}
	return out
}

func deviceTypeName(t slimcuda.DeviceType) string {
	return slimcuda.Device{Type: t, Index: -1}.String()
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
		".pt2 or a package), also the device it runs on and its inputs and outputs as the file states them\n" +
		"(\"unknown\": the file does not say), read without loading it: no GPU is needed. When the model's\n" +
		"device is here it is also loaded (unless -no-load), for its instances, constants and state.",
	define: func(fs *flag.FlagSet) func(c *cmdContext) error {
		var o infoOptions
		fs.BoolVar(&o.asJSON, "json", false, "print the information as JSON")
		fs.StringVar(&o.device, "device", "auto", "MODEL's device: auto, cpu or cuda (needs MODEL)")
		fs.StringVar(&o.modelName, "model-name", "", "which model of a .pt2 holding several (needs MODEL)")
		fs.BoolVar(&o.noLoad, "no-load", false, "describe MODEL from the file only: never load it (loading runs the\n"+
			"library's code)")
		return func(c *cmdContext) error {
			if err := c.args(0, 1, "[MODEL]"); err != nil {
				return err
			}
			if c.fs.NArg() == 0 {
				var err error
				c.fs.Visit(func(f *flag.Flag) {
					if err == nil && (f.Name == "device" || f.Name == "model-name" || f.Name == "no-load") {
						err = c.usageError("-%s needs a MODEL (it says how to describe one)", f.Name)
					}
				})
				if err != nil {
					return err
				}
			}
			o.model = userPath(c.fs.Arg(0))
			return info(c, o)
		}
	},
}

type infoOptions struct {
	asJSON, noLoad           bool
	model, device, modelName string
}

func info(c *cmdContext, o infoOptions) error {
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
	if o.model != "" {
		opts, err := loadOptions(c, o.device, o.modelName)
		if err != nil {
			return err
		}
		if in.ModelInfo, err = describeModel(o.model, opts, !o.noLoad, n > 0); err != nil {
			return err
		}
	}
	if o.asJSON {
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(in)
	}
	fmt.Fprintf(c.stdout, "slimcuda %s; CUDA runtime %s, driver %s\n", in.Version, in.Runtime, in.Driver)
	if in.ModelInfo != nil {
		defer printModel(c, in.ModelInfo, n > 0, o.noLoad)
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

// describeModel describes path from the file, then loads it for what only a load knows when
// load is set and its device is here (a CUDA model with a GPU). A .pt2 whose file states no
// counts is described by the load alone; without one possible, Describe's error is returned.
func describeModel(path string, opts []slimcuda.LoadOption, load, gpu bool) (*ModelInfo, error) {
	mi := &ModelInfo{Path: path}
	d, derr := slimcuda.Describe(path, opts...)
	if derr == nil {
		mi.Device = deviceTypeName(d.Device)
		for _, t := range d.Devices {
			mi.Libraries = append(mi.Libraries, deviceTypeName(t))
		}
		mi.Inputs, mi.Outputs = specInfos(d.Inputs), specInfos(d.Outputs)
		load = load && (d.Device == slimcuda.CPU || gpu)
	} else if !errors.Is(derr, slimcuda.ErrNotSupported) {
		return nil, derr
	}
	if !load {
		return mi, derr
	}
	m, err := slimcuda.Load(path, opts...)
	if err != nil {
		return nil, err
	}
	mi.Loaded, mi.Instances, mi.Constants, mi.State = true, m.Instances(), len(m.Constants()), []string{}
	for _, k := range m.Constants() {
		if k.State {
			mi.State = append(mi.State, k.Name)
		}
	}
	if derr != nil { // what the load knows is all there is
		mi.Device = deviceTypeName(m.Device().Type)
		mi.Libraries = []string{mi.Device}
		mi.Inputs, mi.Outputs = specInfos(m.Inputs()), specInfos(m.Outputs())
	}
	return mi, m.Close()
}

func printModel(c *cmdContext, m *ModelInfo, gpu, noLoad bool) {
	switch {
	case m.Loaded:
		fmt.Fprintf(c.stdout, "%s: on %s, %d instance(s)\n", m.Path, m.Device, m.Instances)
	case noLoad:
		fmt.Fprintf(c.stdout, "%s: for %s (described from the file, not loaded: -no-load)\n", m.Path, m.Device)
	case m.Device == "cuda" && !gpu:
		fmt.Fprintf(c.stdout, "%s: for cuda (described from the file; it runs on a machine with a GPU)\n", m.Path)
	default:
		fmt.Fprintf(c.stdout, "%s: for %s (described from the file)\n", m.Path, m.Device)
	}
	if len(m.Libraries) > 1 {
		fmt.Fprintf(c.stdout, "  libraries: %s\n", strings.Join(m.Libraries, ", "))
	}
	if len(m.State) > 0 {
		fmt.Fprintf(c.stdout, "  state: %d of its %d constants are written by its runs (one copy per load, one call "+
			"at a time): %s\n", len(m.State), m.Constants, strings.Join(m.State, ", "))
	}
	for k, specs := range [][]SpecInfo{m.Inputs, m.Outputs} {
		for i, s := range specs {
			kind := [2]string{"input", "output"}[k]
			if s.Dynamism == "unknown" {
				fmt.Fprintf(c.stdout, "  %s %d %s: unknown (the file does not state it)\n", kind, i, s.Name)
				continue
			}
			fmt.Fprintf(c.stdout, "  %s %d %s: %s %v %s\n", kind, i, s.Name, s.DType, s.Sizes, s.Dynamism)
		}
	}
}
