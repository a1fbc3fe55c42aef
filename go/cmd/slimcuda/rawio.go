package main

import (
	"encoding/json"
	"fmt"
	"io"
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

// maxInputsJSON caps the size of inputs.json.
const maxInputsJSON = 1 << 20

// rawInput is one checked entry of inputs.json: its dtype, element count and byte count.
type rawInput struct {
	rawTensor
	dtype  slimcuda.DType
	numel  int64
	nbytes int64
}

// parseInputs parses and checks inputs.json: each entry names a file inside DIR (a local
// relative path), a dtype raw files support, and non-negative sizes of at most
// maxInputElements elements (checked without overflow). Nothing is allocated for the
// tensors here, so what it accepts is safe to allocate and read.
func parseInputs(data []byte) ([]rawInput, error) {
	var specs []rawTensor
	if err := json.Unmarshal(data, &specs); err != nil {
		return nil, err
	}
	inputs := make([]rawInput, 0, len(specs))
	for i, r := range specs {
		dtype, ok := slimcuda.DTypeByName(r.DType)
		switch {
		case !ok:
			return nil, fmt.Errorf("input %d (%s): unknown dtype %q", i, r.File, r.DType)
		case !rawDType(dtype):
			return nil, fmt.Errorf("input %d (%s): raw %s files are not supported", i, r.File, dtype)
		}
		if !filepath.IsLocal(r.File) {
			return nil, fmt.Errorf("input %d: %q is not a file name inside the inputs directory", i, r.File)
		}
		numel, err := checkedNumel(r.Sizes)
		if err != nil {
			return nil, fmt.Errorf("input %d (%s): %v %s: %v", i, r.File, r.Sizes, dtype, err)
		}
		inputs = append(inputs, rawInput{rawTensor: r, dtype: dtype, numel: numel, nbytes: numel * int64(dtype.Size())})
	}
	return inputs, nil
}

// readBounded reads a regular file of at most limit bytes.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	switch {
	case err != nil:
		return nil, err
	case !st.Mode().IsRegular():
		return nil, fmt.Errorf("%s: not a regular file", path)
	case st.Size() > limit:
		return nil, fmt.Errorf("%s: %d bytes, more than %d", path, st.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(data)) > limit {
		err = fmt.Errorf("%s: more than %d bytes", path, limit)
	}
	return data, err
}

// readInputs loads DIR/inputs.json's tensors onto device, checking every entry
// (parseInputs) and each file's length before allocating a tensor or reading its file.
func readInputs(dir string, device slimcuda.Device) ([]*slimcuda.Tensor, error) {
	data, err := readBounded(filepath.Join(dir, "inputs.json"), maxInputsJSON)
	if err != nil {
		return nil, err
	}
	inputs, err := parseInputs(data)
	if err != nil {
		return nil, fmt.Errorf("%s/inputs.json: %v", dir, err)
	}
	var out []*slimcuda.Tensor
	for _, r := range inputs {
		path := filepath.Join(dir, r.File)
		st, err := os.Stat(path)
		if err != nil {
			return out, err
		}
		if st.Size() != r.nbytes {
			if msg := dtypeBytes(st.Size(), r.dtype); msg != "" {
				return out, fmt.Errorf("%s: %s", r.File, msg)
			}
			return out, fmt.Errorf("%s: %d bytes, want %d for %v %s", r.File, st.Size(), r.nbytes, r.Sizes, r.dtype)
		}
		raw, err := readBounded(path, r.nbytes)
		if err != nil {
			return out, err
		}
		t, err := slimcuda.NewTensor(r.Sizes, r.dtype, device)
		if err != nil {
			return out, err
		}
		out = append(out, t)
		if r.nbytes == 0 {
			continue
		}
		if err := copyRaw(t, raw, r.dtype); err != nil {
			return out, fmt.Errorf("%s: %w", r.File, err)
		}
	}
	return out, nil
}

// dtypeBytes says what is wrong with n bytes as raw elements of dtype ("" when nothing).
func dtypeBytes(n int64, dtype slimcuda.DType) string {
	if n == 0 || n%int64(dtype.Size()) != 0 {
		return fmt.Sprintf("%d bytes is not a whole number of %s elements", n, dtype)
	}
	return ""
}

// rawDType reports whether copyRaw supports dtype.
func rawDType(dtype slimcuda.DType) bool {
	switch dtype {
	case slimcuda.Float32, slimcuda.Float64, slimcuda.Int64, slimcuda.Int32, slimcuda.Float16, slimcuda.BFloat16,
		slimcuda.Uint8, slimcuda.Bool, slimcuda.Int8:
		return true
	}
	return false
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
