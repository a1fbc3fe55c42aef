package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"unsafe"

	"github.com/slimcuda/slimcuda/go/slimcuda"
)

// rawTensor describes one raw tensor file of an inputs.json / outputs.json:
// row-major elements of dtype, little-endian, in file.
type rawTensor struct {
	File  string  `json:"file"`
	DType string  `json:"dtype"`
	Sizes []int64 `json:"sizes"`
}

// readInputs loads DIR/inputs.json's tensors onto device.
func readInputs(dir string, device slimcuda.Device) ([]*slimcuda.Tensor, error) {
	data, err := os.ReadFile(filepath.Join(dir, "inputs.json"))
	if err != nil {
		return nil, err
	}
	var specs []rawTensor
	if err := json.Unmarshal(data, &specs); err != nil {
		return nil, fmt.Errorf("%s/inputs.json: %v", dir, err)
	}
	var out []*slimcuda.Tensor
	for _, r := range specs {
		dtype, ok := slimcuda.DTypeByName(r.DType)
		if !ok {
			return out, fmt.Errorf("%s: unknown dtype %q", r.File, r.DType)
		}
		raw, err := os.ReadFile(filepath.Join(dir, r.File))
		if err != nil {
			return out, err
		}
		t, err := slimcuda.NewTensor(r.Sizes, dtype, device)
		if err != nil {
			return out, err
		}
		out = append(out, t)
		if err := copyRaw(t, raw, dtype); err != nil {
			return out, fmt.Errorf("%s: %w", r.File, err)
		}
	}
	return out, nil
}

// copyRaw fills t from raw bytes of its dtype, viewed as the matching Go slice type.
func copyRaw(t *slimcuda.Tensor, raw []byte, dtype slimcuda.DType) error {
	if len(raw) == 0 || len(raw)%dtype.Size() != 0 {
		return fmt.Errorf("%d bytes is not a whole number of %s elements", len(raw), dtype)
	}
	n := len(raw) / dtype.Size()
	p := unsafe.Pointer(&raw[0])
	switch dtype {
	case slimcuda.Float32:
		return t.CopyFromHost(unsafe.Slice((*float32)(p), n))
	case slimcuda.Float64:
		return t.CopyFromHost(unsafe.Slice((*float64)(p), n))
	case slimcuda.Int64:
		return t.CopyFromHost(unsafe.Slice((*int64)(p), n))
	case slimcuda.Int32:
		return t.CopyFromHost(unsafe.Slice((*int32)(p), n))
	case slimcuda.Float16:
		return t.CopyFromHost(unsafe.Slice((*slimcuda.Float16Bits)(p), n))
	case slimcuda.BFloat16:
		return t.CopyFromHost(unsafe.Slice((*slimcuda.BFloat16Bits)(p), n))
	case slimcuda.Uint8, slimcuda.Bool, slimcuda.Int8:
		return t.CopyFromHost(raw)
	}
	return fmt.Errorf("raw %s files are not supported", dtype)
}

// saveOutputs writes outputs as float32 raw files (outputs of any float dtype are
// converted) plus DIR/outputs.json.
func saveOutputs(dir string, outputs []*slimcuda.Tensor) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var specs []rawTensor
	for i, t := range outputs {
		info, err := t.Info()
		if err != nil {
			return err
		}
		values := make([]float32, info.Numel)
		if err := t.CopyToHost(values); err != nil {
			return err
		}
		name := fmt.Sprintf("output_%d.bin", i)
		var raw []byte
		if len(values) > 0 {
			raw = unsafe.Slice((*byte)(unsafe.Pointer(&values[0])), 4*len(values))
		}
		if err := os.WriteFile(filepath.Join(dir, name), raw, 0o644); err != nil {
			return err
		}
		specs = append(specs, rawTensor{File: name, DType: "float32", Sizes: info.Sizes})
	}
	data, err := json.MarshalIndent(specs, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "outputs.json"), data, 0o644)
}
