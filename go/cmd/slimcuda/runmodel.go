// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/slimcuda/slimcuda/go/slimcuda"
)

// demoRunfile is the demo package's path in this repository's runfiles.
const demoRunfile = "models/demo/demo.slimcuda"

// demoPackage finds the demo package: $SLIMCUDA_DEMO_PACKAGE, else the one installed beside
// the CLI (installed: PREFIX/share/slimcuda/demo.slimcuda, tools/install.sh), else the demo in
// the runfiles of a `bazel run` (runfile), else bazel-bin/models/demo/demo.slimcuda below the
// working directory.
func demoPackage() (string, error) {
	if p := os.Getenv("SLIMCUDA_DEMO_PACKAGE"); p != "" {
		return p, nil
	}
	if p, ok := installed("demo.slimcuda"); ok {
		return p, nil
	}
	if p, ok := runfile(demoRunfile); ok {
		return p, nil
	}
	if p := filepath.Join("bazel-bin", demoRunfile); fileExists(p) {
		return p, nil
	}
	return "", errNoDemo
}

var errNoDemo = errors.New("slimcuda run: no demo model found beside this slimcuda (share/slimcuda/demo.slimcuda): " +
	"give a MODEL (slimcuda run model.pt2), or set SLIMCUDA_DEMO_PACKAGE to the demo's path")

// installed finds a file the install put under PREFIX/share/slimcuda/, where PREFIX is the
// folder above the executable's bin/ (symbolic links to the executable followed).
func installed(name string) (string, bool) {
	exe, err := os.Executable()
	if err != nil {
		return "", false
	}
	return installedBeside(exe, name)
}

func installedBeside(exe, name string) (string, bool) {
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	p := filepath.Join(filepath.Dir(filepath.Dir(exe)), "share", "slimcuda", name)
	return p, fileExists(p)
}

// Summary is what `slimcuda run` reports (also as JSON with --json).
type Summary struct {
	Model      string          `json:"model"` // the path, as every command names it
	Device     string          `json:"device"`
	LoadMillis float64         `json:"load_ms"`
	FirstRunMs float64         `json:"first_run_ms"`
	RunMillis  float64         `json:"mean_ms"` // of the timed runs, as bench-load's mean_ms
	Iterations int             `json:"iterations"`
	Inputs     []TensorSummary `json:"inputs"`
	Outputs    []TensorSummary `json:"outputs"`
	// The outputs against a reference: -expect's, or the demo's own (nil: none to check).
	Reference *ReferenceCheck `json:"reference,omitempty"`
	// Device memory cache statistics after the runs (CUDA models).
	Memory *MemoryStats `json:"memory,omitempty"`
}

// MemoryStats is slimcuda.MemoryStats in the JSON's own snake_case keys.
type MemoryStats struct {
	AllocatedBytes     uint64 `json:"allocated_bytes"`
	PeakAllocatedBytes uint64 `json:"peak_allocated_bytes"`
	ReservedBytes      uint64 `json:"reserved_bytes"`
	PeakReservedBytes  uint64 `json:"peak_reserved_bytes"`
	Allocations        uint64 `json:"allocations"`
	Frees              uint64 `json:"frees"`
	CacheHits          uint64 `json:"cache_hits"`
	CacheMisses        uint64 `json:"cache_misses"`
	Segments           uint64 `json:"segments"`
	OOMRetries         uint64 `json:"oom_retries"`
}

func memoryStats(m slimcuda.MemoryStats) *MemoryStats {
	return &MemoryStats{m.AllocatedBytes, m.PeakAllocatedBytes, m.ReservedBytes, m.PeakReservedBytes, m.Allocations,
		m.Frees, m.CacheHits, m.CacheMisses, m.Segments, m.OOMRetries}
}

// TensorSummary describes one input or output.
type TensorSummary struct {
	Name   string      `json:"name"`
	DType  string      `json:"dtype"`
	Sizes  []int64     `json:"sizes"`
	Min    jsonFloat   `json:"min"` // NaN, +Inf and -Inf are strings: see jsonFloat
	Max    jsonFloat   `json:"max"`
	Sum    jsonFloat   `json:"sum"`
	Values []jsonFloat `json:"values,omitempty"` // all values with -values
}

var runCommand = command{
	usageLine: "run [flags] [MODEL]",
	doc: "Loads a model — a PyTorch .pt2 or a slimcuda package (default: the demo package) —, runs it on\n" +
		"deterministic inputs (or on .npy files: -inputs) and summarizes the outputs and timings. A package's\n" +
		"CUDA library is used with a GPU, else its CPU library; a .pt2 model runs on the device it was compiled\n" +
		"for. Flags may also follow MODEL.",
	define: func(fs *flag.FlagSet) func(c *cmdContext) error {
		var o runOptions
		fs.StringVar(&o.device, "device", "auto", "auto (CUDA when a GPU is there), cpu or cuda")
		fs.Int64Var(&o.batch, "batch", defaultBatch, "size of dimension 0 of dynamic inputs: at least 1 and within each\n"+
			"dynamic-bounded input's bound (the default is lowered to a smaller bound)")
		fs.IntVar(&o.iterations, "iterations", 10, "timed runs after the first")
		fs.BoolVar(&o.asJSON, "json", false, "print the summary as JSON (non-finite values as the strings \"NaN\", \"+Inf\", \"-Inf\")")
		fs.BoolVar(&o.values, "values", false, "include every output value (needs -json)")
		fs.StringVar(&o.inputs, "inputs", "", "read the inputs from NumPy .npy files: a comma-separated list, one per input,\n"+
			"or a directory holding input_0.npy, input_1.npy, ...")
		fs.StringVar(&o.save, "save", "", "write each output to DIR/output_<i>.npy (NumPy, in the output's dtype)")
		fs.StringVar(&o.modelName, "model-name", "", "which model of a .pt2 holding several (default: its only one, or \"model\")")
		fs.StringVar(&o.expect, "expect", "", "check the outputs against NumPy .npy files (a comma-separated list, one per\n"+
			"output, or a directory holding expected_0.npy, ...); a mismatch fails the run. The demo, run on its\n"+
			"own inputs, is checked against its exact reference without it")
		fs.Float64Var(&o.atol, "atol", 1e-5, "-expect's absolute tolerance")
		fs.Float64Var(&o.rtol, "rtol", 1e-5, "-expect's relative tolerance")
		return func(c *cmdContext) error {
			if err := c.args(0, 1, "[MODEL]"); err != nil {
				return err
			}
			c.fs.Visit(func(f *flag.Flag) { o.batchSet = o.batchSet || f.Name == "batch" })
			return runModel(c, o)
		}
	},
}

type runOptions struct {
	device         string
	batch          int64
	batchSet       bool
	iterations     int
	asJSON, values bool
	inputs, save   string
	modelName      string
	expect         string
	atol, rtol     float64
}

// loadOptions are the options of -device and -model-name (shared by run, info and bench-load).
func loadOptions(c *cmdContext, device, modelName string) ([]slimcuda.LoadOption, error) {
	var opts []slimcuda.LoadOption
	switch device {
	case "auto":
	case "cpu":
		opts = append(opts, slimcuda.LoadOnDevice(slimcuda.CPUDevice))
	case "cuda":
		opts = append(opts, slimcuda.LoadOnDevice(slimcuda.CurrentCUDA))
	default:
		return nil, c.usageError("-device %q: want auto, cpu or cuda", device)
	}
	if modelName != "" {
		opts = append(opts, slimcuda.WithModelName(modelName))
	}
	return opts, nil
}

// runModel is `slimcuda run`: load, build or read the inputs, run once and check, time the
// runs, report. A mismatch with the reference is its error, after the report.
func runModel(c *cmdContext, o runOptions) error {
	opts, err := checkRunOptions(c, o)
	if err != nil {
		return err
	}
	path := userPath(c.fs.Arg(0))
	demo := path == ""
	if demo {
		if path, err = demoPackage(); err != nil {
			return err
		}
	}
	say := progress(c.stderr)
	say("loading %s", path)
	start := time.Now()
	model, err := slimcuda.Load(path, opts...)
	if err != nil {
		return err
	}
	defer model.Close()
	s := Summary{Model: path, Device: model.Device().String(), LoadMillis: ms(time.Since(start)), Iterations: o.iterations}

	inputs, err := runInputs(c, o, model, &s)
	defer func() {
		for _, t := range inputs {
			t.Close()
		}
	}()
	if err != nil {
		return err
	}
	say("running on %s", s.Device)
	mismatch, err := firstRun(model, inputs, o, demo, &s)
	if err != nil {
		return err
	}
	if o.iterations > 0 {
		if s.RunMillis, err = meanRunMillis(model, inputs, o.iterations); err != nil {
			return err
		}
	}
	if model.Device().Type == slimcuda.CUDA {
		if m, err := slimcuda.GetMemoryStats(model.Device()); err == nil {
			s.Memory = memoryStats(m)
		}
	}
	if err := writeSummary(c.stdout, s, o, demo, mismatch); err != nil {
		return err
	}
	return mismatch
}

// checkRunOptions refuses flag values that cannot work (usage errors) and returns the load
// options of -device and -model-name.
func checkRunOptions(c *cmdContext, o runOptions) ([]slimcuda.LoadOption, error) {
	if o.iterations < 0 {
		return nil, c.usageError("-iterations must be >= 0")
	}
	if o.batch < 1 {
		return nil, c.usageError("-batch must be >= 1, not %d", o.batch)
	}
	if o.values && !o.asJSON {
		return nil, c.usageError("-values needs -json (the values are part of the JSON summary)")
	}
	opts, err := loadOptions(c, o.device, o.modelName)
	if err != nil {
		return nil, err
	}
	if o.atol < 0 || o.rtol < 0 || math.IsNaN(o.atol) || math.IsNaN(o.rtol) {
		return nil, c.usageError("-atol and -rtol must be >= 0")
	}
	return opts, nil
}

// runInputs returns the model's inputs: read from -inputs' files, else built from the specs
// (their summaries go into s). On an error it returns those made so far, for the caller to
// close.
func runInputs(c *cmdContext, o runOptions, model *slimcuda.Model, s *Summary) ([]*slimcuda.Tensor, error) {
	if o.inputs != "" {
		return readInputs(o.inputs, model.Inputs(), model.Device())
	}
	// Every input's sizes are checked before any is built.
	specs := model.Inputs()
	sizes := make([][]int64, len(specs))
	for i, spec := range specs {
		if spec.Dynamism == slimcuda.UnknownSpec {
			return nil, fmt.Errorf("slimcuda run: %s: input %d (%s): the model file states no dtype or shape "+
				"(a .pt2 without its wrapper source): give the inputs with -inputs", s.Model, i, spec.Name)
		}
		var err error
		if sizes[i], err = inputSizes(spec, o.batch, o.batchSet); err != nil {
			if errors.As(err, new(batchError)) {
				return nil, c.usageError("-batch %d: %v", o.batch, err)
			}
			return nil, fmt.Errorf("slimcuda run: %s: %w", s.Model, err)
		}
	}
	inputs := make([]*slimcuda.Tensor, 0, len(specs))
	for i, spec := range specs {
		t, summary, err := makeInput(spec, sizes[i], model.Device())
		if err != nil {
			return inputs, err
		}
		inputs = append(inputs, t)
		s.Inputs = append(s.Inputs, summary)
	}
	return inputs, nil
}

// firstRun runs the model once (timed into s), saves the outputs (-save), summarizes them
// into s and checks them against the reference, if there is one: a mismatch is returned as
// mismatch (the run goes on to its timings), every other failure as err.
func firstRun(model *slimcuda.Model, inputs []*slimcuda.Tensor, o runOptions, demo bool,
	s *Summary) (mismatch, err error) {
	start := time.Now()
	outputs, err := model.Run(inputs)
	if err != nil {
		return nil, err
	}
	s.FirstRunMs = ms(time.Since(start))
	if o.save != "" {
		if err := saveOutputs(userPath(o.save), outputs); err != nil {
			return nil, err
		}
	}
	var ref *reference
	switch {
	case o.expect != "":
		if ref, err = expectedFromFiles(o.expect, len(outputs), o.atol, o.rtol); err != nil {
			return nil, err
		}
	case demo && o.inputs == "":
		if ref, err = demoReference(o.batch); err != nil {
			return nil, err
		}
	}
	got := make([][]float64, 0, len(outputs))
	for i, out := range outputs {
		summary, vals, err := summarize(model.Outputs()[i].Name, out, o.values)
		out.Close()
		if err != nil {
			return nil, err
		}
		s.Outputs = append(s.Outputs, summary)
		got = append(got, vals)
	}
	if ref == nil {
		return nil, nil
	}
	check, mismatch := ref.compare(got)
	s.Reference = &check
	return mismatch, nil
}

// meanRunMillis times `iterations` (> 0) runs of the model and returns the mean, in ms.
func meanRunMillis(model *slimcuda.Model, inputs []*slimcuda.Tensor, iterations int) (float64, error) {
	start := time.Now()
	for i := 0; i < iterations; i++ {
		outs, err := model.Run(inputs)
		if err != nil {
			return 0, err
		}
		for _, o := range outs {
			o.Close()
		}
	}
	return roundMs(float64(time.Since(start).Microseconds()) / 1000 / float64(iterations)), nil
}

// writeSummary prints s to w: as JSON with -json, else as lines for people, which say
// whether the outputs matched their reference (a mismatch is the caller's error to report).
func writeSummary(w io.Writer, s Summary, o runOptions, demo bool, mismatch error) error {
	if o.asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(s)
	}
	fmt.Fprintf(w, "%s on %s: load %.2f ms, first run %.3f ms, mean of %d runs %.3f ms\n", s.Model, s.Device,
		s.LoadMillis, s.FirstRunMs, s.Iterations, s.RunMillis)
	if s.Memory != nil {
		fmt.Fprintf(w, "  device memory: peak %d bytes allocated, %d reserved; cache %d hits, %d misses\n",
			s.Memory.PeakAllocatedBytes, s.Memory.PeakReservedBytes, s.Memory.CacheHits, s.Memory.CacheMisses)
	}
	for _, out := range s.Outputs {
		fmt.Fprintf(w, "  output %s: %s %v, min %.6g, max %.6g, sum %.6g\n", out.Name, out.DType, out.Sizes, out.Min,
			out.Max, out.Sum)
	}
	switch {
	case s.Reference == nil && demo && o.inputs == "":
		fmt.Fprintf(w, "  reference: none for batch %d (demo_model.json has batches 1, 4, 7, 64)\n", o.batch)
	case s.Reference != nil && mismatch == nil:
		fmt.Fprintf(w, "  reference: all %d values match %s (max |diff| %.3g)\n", s.Reference.Values,
			s.Reference.Source, float64(s.Reference.MaxAbsDiff))
	}
	return nil
}

// ms is a duration in milliseconds to the microsecond (what the clocks here resolve).
func ms(d time.Duration) float64 { return roundMs(float64(d.Microseconds()) / 1000) }

// roundMs rounds milliseconds to the microsecond, so a mean prints as 0.2618, not
// 0.26180000000000003.
func roundMs(v float64) float64 { return math.Round(v*1000) / 1000 }

// defaultBatch is -batch's default; a dynamic-bounded input with a smaller bound gets its bound.
const defaultBatch = 4

// maxInputElements caps each input the CLI builds or reads: 2^27 elements, which is 1 GiB of
// host memory staged as float64 (makeInput) and at most 1 GiB of raw file (readInputs, 8-byte
// dtypes). Larger inputs are refused with an error, never attempted.
const maxInputElements = 1 << 27

// batchError marks input sizes refused because of the -batch value (exit status 2).
type batchError struct{ error }

// checkedNumel returns the number of elements of sizes, refusing negative sizes and counts
// above maxInputElements; it cannot overflow.
func checkedNumel(sizes []int64) (int64, error) {
	for _, d := range sizes {
		if d < 0 {
			return 0, fmt.Errorf("negative size in %v", sizes)
		}
		if d == 0 {
			return 0, nil
		}
	}
	n := int64(1)
	for _, d := range sizes {
		if d > maxInputElements/n {
			return 0, fmt.Errorf("more than %d elements, the most the CLI builds (1 GiB of host memory)",
				int64(maxInputElements))
		}
		n *= d
	}
	return n, nil
}

// inputSizes returns the sizes makeInput builds for spec: the declared sizes of a static
// input; for a dynamic one, batch as dimension 0 and its other sizes (bounds, or 1 where
// unknown). A dynamic-bounded input refuses a batch above its bound unless batch is the
// default (explicit false), which is lowered to the bound. Errors caused by batch are
// batchErrors.
func inputSizes(spec slimcuda.TensorSpec, batch int64, explicit bool) ([]int64, error) {
	sizes := append([]int64(nil), spec.Sizes...)
	fromBatch := false
	if spec.Dynamism != slimcuda.Static && len(sizes) > 0 {
		switch {
		case batch < 1:
			return nil, batchError{errors.New("must be >= 1")}
		case spec.Dynamism == slimcuda.DynamicBounded && batch > sizes[0] && explicit:
			return nil, batchError{fmt.Errorf("input %s allows a batch of 1 to %d", spec.Name, sizes[0])}
		case spec.Dynamism == slimcuda.DynamicBounded && batch > sizes[0]:
		default:
			sizes[0], fromBatch = batch, true
		}
		for i := range sizes {
			if sizes[i] < 0 {
				sizes[i] = 1
			}
		}
	}
	if _, err := checkedNumel(sizes); err != nil {
		err = fmt.Errorf("input %s: %v %s has %v", spec.Name, sizes, spec.DType, err)
		if fromBatch {
			err = batchError{err}
		}
		return nil, err
	}
	return sizes, nil
}

// makeInput builds a deterministic input of the given sizes (from inputSizes) for spec:
// x[k] = ((k*5) % 11 - 5) / 8 over the row-major index k (the demo's reference inputs), cast
// to the input's dtype.
func makeInput(spec slimcuda.TensorSpec, sizes []int64, device slimcuda.Device) (*slimcuda.Tensor, TensorSummary, error) {
	n, err := checkedNumel(sizes)
	if err != nil {
		return nil, TensorSummary{}, fmt.Errorf("input %s: %w", spec.Name, err)
	}
	values := make([]float64, n)
	for k := range values {
		values[k] = float64((k*5)%11-5) / 8
	}
	t, err := slimcuda.NewTensor(sizes, spec.DType, device)
	if err != nil {
		return nil, TensorSummary{}, err
	}
	if err := slimcuda.CopyFromHost(t, values); err != nil {
		t.Close()
		return nil, TensorSummary{}, err
	}
	return t, describe(spec.Name, spec.DType, sizes, values, false), nil
}

// summarize describes an output and returns its values (row-major, as float64).
func summarize(name string, t *slimcuda.Tensor, all bool) (TensorSummary, []float64, error) {
	info, err := t.Info()
	if err != nil {
		return TensorSummary{}, nil, err
	}
	values := make([]float64, info.Numel)
	if err := slimcuda.CopyToHost(t, values); err != nil {
		return TensorSummary{}, nil, err
	}
	return describe(name, info.DType, info.Sizes, values, all), values, nil
}

func describe(name string, dtype slimcuda.DType, sizes []int64, values []float64, all bool) TensorSummary {
	s := TensorSummary{Name: name, DType: dtype.String(), Sizes: sizes}
	lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
	for _, v := range values {
		lo = math.Min(lo, v)
		hi = math.Max(hi, v)
		sum += v
	}
	if len(values) == 0 {
		lo, hi = 0, 0
	}
	s.Min, s.Max, s.Sum = jsonFloat(lo), jsonFloat(hi), jsonFloat(sum)
	if all {
		s.Values = jsonFloats(values)
	}
	return s
}
