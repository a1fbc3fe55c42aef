// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unsafe"

	"github.com/slimcuda/slimcuda/go/npy"
	"github.com/slimcuda/slimcuda/go/slimcuda"
)

// maxInputBytes caps each .npy input the CLI reads: 1 GiB of data (checked from the header,
// before anything is allocated).
const maxInputBytes = 1 << 30

// npyFiles lists the .npy files a flag names for n tensors: the comma-separated files
// given, or DIR/<prefix>_<i>.npy for i < n when the value is a directory (-inputs: input_,
// -expect: expected_).
func npyFiles(flagName, value, prefix string, n int) ([]string, error) {
	if st, err := os.Stat(userPath(value)); err == nil && st.IsDir() {
		files := make([]string, n)
		for i := range files {
			files[i] = filepath.Join(userPath(value), fmt.Sprintf("%s_%d.npy", prefix, i))
		}
		return files, nil
	}
	var files []string
	for _, f := range strings.Split(value, ",") {
		files = append(files, userPath(f))
	}
	if len(files) != n {
		what := "input"
		if prefix != "input" {
			what = "output"
		}
		return nil, fmt.Errorf("slimcuda run: %s names %d file(s); the model has %d %s(s)", flagName, len(files), n, what)
	}
	return files, nil
}

// readInputs loads the -inputs .npy files onto device, each a tensor of the file's dtype
// and shape. A file whose dtype is not its input's is refused here, naming the file and the
// conversion; the model checks the rest (shapes) against its specs.
func readInputs(value string, specs []slimcuda.TensorSpec, device slimcuda.Device) ([]*slimcuda.Tensor, error) {
	files, err := npyFiles("-inputs", value, "input", len(specs))
	if err != nil {
		return nil, err
	}
	var out []*slimcuda.Tensor
	for i, f := range files {
		spec := specs[i]
		t, err := readNPYAs(f, device, func(got slimcuda.DType) error {
			if spec.Dynamism == slimcuda.UnknownSpec || got == spec.DType {
				return nil
			}
			return fmt.Errorf("slimcuda run: %s holds %s, but input %d (%s) takes %s: convert it before saving, "+
				"e.g. np.save(path, x.astype(np.%s))", f, got, i, spec.Name, spec.DType, spec.DType)
		})
		if err != nil {
			return out, err
		}
		out = append(out, t)
	}
	return out, nil
}

// openRegular opens path for reading and refuses anything but a regular file. O_NONBLOCK:
// a plain open of a FIFO waits for a writer, so a FIFO given as an input blocked the CLI
// forever before the file could be looked at.
func openRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("%s: not a regular file (%s)", path, fileKind(st.Mode()))
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// writeRegular writes data to path (created 0644 when absent) and refuses anything but a
// regular file: opened O_NONBLOCK and without O_TRUNC, so a FIFO never blocks (ENXIO with no
// reader) and nothing is truncated before the file is known to be a regular one.
func writeRegular(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		if st, serr := os.Stat(path); serr == nil && !st.Mode().IsRegular() {
			return fmt.Errorf("%s: not a regular file (%s)", path, fileKind(st.Mode()))
		}
		return err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("%s: not a regular file (%s)", path, fileKind(st.Mode()))
	}
	if err == nil {
		err = f.Truncate(0)
	}
	if err == nil {
		_, err = f.Write(data)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// fileKind names what a path that is not a regular file is (the C library's words).
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&os.ModeNamedPipe != 0:
		return "fifo"
	case m&os.ModeDevice != 0:
		return "device"
	case m&os.ModeSocket != 0:
		return "socket"
	}
	return "unknown type"
}

func readNPY(path string, device slimcuda.Device) (*slimcuda.Tensor, error) {
	return readNPYAs(path, device, func(slimcuda.DType) error { return nil })
}

// readNPYAs is readNPY with a check of the file's dtype before the tensor is made.
func readNPYAs(path string, device slimcuda.Device, check func(slimcuda.DType) error) (*slimcuda.Tensor, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, fmt.Errorf("slimcuda run: %w", err)
	}
	defer f.Close()
	a, err := npy.Read(f, maxInputBytes)
	if err != nil {
		return nil, fmt.Errorf("slimcuda run: %s: %w", path, err)
	}
	dtype, ok := slimcuda.DTypeByName(string(a.DType))
	if !ok {
		return nil, fmt.Errorf("slimcuda run: %s holds %s, which slimcuda has no tensors of: save it as one of "+
			"float32, float64, float16, bfloat16, int64, int32, int16, int8, uint8 or bool", path, a.DType)
	}
	if err := check(dtype); err != nil {
		return nil, err
	}
	t, err := slimcuda.NewTensor(a.Shape, dtype, device)
	if err != nil {
		return nil, aboutFile("slimcuda run", path, err)
	}
	if len(a.Data) > 0 {
		if err := copyRaw(t, a.Data, dtype); err != nil {
			t.Close()
			return nil, aboutFile("slimcuda run", path, err)
		}
	}
	return t, nil
}

// fileError is an error about one of the user's files: "slimcuda run: x.npy: " and the
// cause, which wraps. A library error's own "slimcuda: " is not said twice: "slimcuda run:
// x.npy: NewTensor: NotSupported: ...".
type fileError struct {
	cmd, path string
	err       error
}

func aboutFile(cmd, path string, err error) error { return &fileError{cmd, path, err} }

func (e *fileError) Error() string {
	return e.cmd + ": " + e.path + ": " + strings.TrimPrefix(e.err.Error(), "slimcuda: ")
}

func (e *fileError) Unwrap() error { return e.err }

// view reinterprets raw little-endian bytes as n elements of T (x86-64 is little-endian).
func view[T slimcuda.HostElement](raw []byte) []T {
	var zero T
	return unsafe.Slice((*T)(unsafe.Pointer(&raw[0])), len(raw)/int(unsafe.Sizeof(zero)))
}

// copyRaw fills t from raw bytes of its dtype.
func copyRaw(t *slimcuda.Tensor, raw []byte, dtype slimcuda.DType) error {
	switch dtype {
	case slimcuda.Float32:
		return slimcuda.CopyFromHost(t, view[float32](raw))
	case slimcuda.Float64:
		return slimcuda.CopyFromHost(t, view[float64](raw))
	case slimcuda.Int64:
		return slimcuda.CopyFromHost(t, view[int64](raw))
	case slimcuda.Int32:
		return slimcuda.CopyFromHost(t, view[int32](raw))
	case slimcuda.Int16:
		return slimcuda.CopyFromHost(t, view[int16](raw))
	case slimcuda.Float16:
		return slimcuda.CopyFromHost(t, view[slimcuda.Float16Bits](raw))
	case slimcuda.BFloat16:
		return slimcuda.CopyFromHost(t, view[slimcuda.BFloat16Bits](raw))
	case slimcuda.Int8:
		return slimcuda.CopyFromHost(t, view[int8](raw))
	case slimcuda.Bool:
		return slimcuda.CopyFromHost(t, view[bool](raw))
	case slimcuda.Uint8:
		return slimcuda.CopyFromHost(t, raw)
	}
	return fmt.Errorf("%s tensors cannot be read from .npy", dtype)
}

// readRaw copies t (numel elements of dtype) into raw little-endian bytes.
func readRaw(t *slimcuda.Tensor, dtype slimcuda.DType, numel int64) ([]byte, error) {
	raw := make([]byte, numel*int64(dtype.Size()))
	if numel == 0 {
		return raw, nil
	}
	switch dtype {
	case slimcuda.Float32:
		return raw, slimcuda.CopyToHost(t, view[float32](raw))
	case slimcuda.Float64:
		return raw, slimcuda.CopyToHost(t, view[float64](raw))
	case slimcuda.Int64:
		return raw, slimcuda.CopyToHost(t, view[int64](raw))
	case slimcuda.Int32:
		return raw, slimcuda.CopyToHost(t, view[int32](raw))
	case slimcuda.Int16:
		return raw, slimcuda.CopyToHost(t, view[int16](raw))
	case slimcuda.Float16:
		return raw, slimcuda.CopyToHost(t, view[slimcuda.Float16Bits](raw))
	case slimcuda.BFloat16:
		return raw, slimcuda.CopyToHost(t, view[slimcuda.BFloat16Bits](raw))
	case slimcuda.Int8:
		return raw, slimcuda.CopyToHost(t, view[int8](raw))
	case slimcuda.Bool:
		return raw, slimcuda.CopyToHost(t, view[bool](raw))
	case slimcuda.Uint8:
		return raw, slimcuda.CopyToHost(t, raw)
	}
	return nil, fmt.Errorf("%s tensors cannot be written as .npy", dtype)
}

// saveOutputs writes each output to DIR/output_<i>.npy in its own dtype (bfloat16 as the
// '<u2' bit patterns: package npy's convention).
func saveOutputs(dir string, outputs []*slimcuda.Tensor) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("slimcuda run: -save: %w", err)
	}
	for i, t := range outputs {
		info, err := t.Info()
		if err != nil {
			return err
		}
		raw, err := readRaw(t, info.DType, info.Numel)
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		if err := npy.Write(&buf, npy.Array{DType: npy.DType(info.DType.String()), Shape: info.Sizes, Data: raw}); err != nil {
			return err
		}
		if err := writeRegular(filepath.Join(dir, fmt.Sprintf("output_%d.npy", i)), buf.Bytes()); err != nil {
			return fmt.Errorf("slimcuda run: -save: %w", err)
		}
	}
	return nil
}
