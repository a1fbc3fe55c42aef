// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/slimcuda/slimcuda/go/internal/fixture"
	"github.com/slimcuda/slimcuda/go/npy"
	"github.com/slimcuda/slimcuda/go/slimcuda"
	"github.com/stretchr/testify/require"
)

// -inputs and -save: .npy tensors in, .npy outputs (in their own dtype) out.
func TestRunWithNPYInputsAndSavedOutputs(t *testing.T) {
	dir := t.TempDir()
	in, want := fixture.DemoReference[float32](t,
		fixture.Runfile(t, "SLIMCUDA_DEMO_MODEL_JSON", "testdata/demo_model.json"), "run_cpu_batch_1")
	require.Len(t, in, 16)
	raw := make([]byte, 0, 64)
	for _, v := range in {
		raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(v))
	}
	var file bytes.Buffer
	require.NoError(t, npy.Write(&file, npy.Array{DType: npy.Float32, Shape: []int64{1, 16}, Data: raw}))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "input_0.npy"), file.Bytes(), 0o644))
	for _, inputs := range []string{dir, filepath.Join(dir, "input_0.npy")} { // a directory, or a list of files
		var out, errOut bytes.Buffer
		code := run([]string{"run", "-device", "cpu", "-inputs", inputs, "-save", filepath.Join(dir, "out"), demoPath(t)},
			&out, &errOut)
		require.Equal(t, 0, code, errOut.String())
		f, err := os.Open(filepath.Join(dir, "out", "output_0.npy"))
		require.NoError(t, err)
		got, err := npy.Read(f, 1<<20)
		f.Close()
		require.NoError(t, err)
		require.Equal(t, npy.Float32, got.DType)
		require.Equal(t, []int64{1, 8}, got.Shape)
		for i := range want {
			require.Equal(t, want[i], math.Float32frombits(binary.LittleEndian.Uint32(got.Data[4*i:])), "output %d", i)
		}
	}
	// A truncated file, a wrong dtype for the model, or a missing file is an error, not a crash.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "input_0.npy"), file.Bytes()[:file.Len()-3], 0o644))
	var out, errOut bytes.Buffer
	require.Equal(t, 1, run([]string{"run", "-device", "cpu", "-inputs", dir, demoPath(t)}, &out, &errOut))
	require.Contains(t, errOut.String(), "fewer in the file")
	errOut.Reset()
	file.Reset()
	require.NoError(t, npy.Write(&file, npy.Array{DType: npy.Int64, Shape: []int64{1, 16}, Data: make([]byte, 128)}))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "input_0.npy"), file.Bytes(), 0o644))
	require.Equal(t, 1, run([]string{"run", "-device", "cpu", "-inputs", dir, demoPath(t)}, &out, &errOut))
	require.Contains(t, errOut.String(), "input_0.npy holds int64, but input 0 (x) takes float32")
	errOut.Reset()
	require.Equal(t, 1, run([]string{"run", "-device", "cpu", "-inputs", filepath.Join(dir, "none.npy"), demoPath(t)},
		&out, &errOut))
	require.Contains(t, errOut.String(), "no such file")
	errOut.Reset()
	require.Equal(t, 1, run([]string{"run", "-device", "cpu", "-inputs", "a.npy,b.npy", demoPath(t)}, &out, &errOut))
	require.Contains(t, errOut.String(), "names 2 file(s); the model has 1 input(s)")
}

// An error about one of the user's files names the file and reads once: the library's own
// "slimcuda: " is not said again, and errors.Is still sees its code.
func TestFileErrorsReadOnce(t *testing.T) {
	lib := &slimcuda.Error{Op: "NewTensor", Code: slimcuda.ErrNotSupported, Message: "no CUDA device"}
	err := aboutFile("slimcuda run", "x.npy", lib)
	require.Equal(t, "slimcuda run: x.npy: NewTensor: NotSupported: no CUDA device", err.Error())
	require.ErrorIs(t, err, slimcuda.ErrNotSupported)
	if gpu(t) {
		return
	}
	// Through the real path: a .npy read onto a GPU that is not there.
	var file bytes.Buffer
	require.NoError(t, npy.Write(&file, npy.Array{DType: npy.Float32, Shape: []int64{1}, Data: make([]byte, 4)}))
	path := filepath.Join(t.TempDir(), "x.npy")
	require.NoError(t, os.WriteFile(path, file.Bytes(), 0o644))
	_, err = readNPY(path, slimcuda.CUDADevice(0))
	require.ErrorIs(t, err, slimcuda.ErrNotSupported)
	require.Equal(t, 0, strings.Count(strings.ReplaceAll(err.Error(), path, "PATH"), "slimcuda: "), err.Error())
	require.True(t, strings.HasPrefix(err.Error(), "slimcuda run: "+path+": NewTensor: NotSupported: "), err.Error())
}

// -inputs and -save take regular files only: a FIFO given as an input, or standing where
// an output goes, blocked the CLI forever before (os.Open and os.WriteFile wait for the
// other end).
func TestRunRefusesFilesThatAreNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "input.npy")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	var file bytes.Buffer
	require.NoError(t, npy.Write(&file, npy.Array{DType: npy.Float32, Shape: []int64{1, 16}, Data: make([]byte, 64)}))
	input := filepath.Join(dir, "x.npy")
	require.NoError(t, os.WriteFile(input, file.Bytes(), 0o644))
	save := filepath.Join(dir, "out")
	require.NoError(t, os.Mkdir(save, 0o755))
	require.NoError(t, syscall.Mkfifo(filepath.Join(save, "output_0.npy"), 0o644))
	for _, tc := range []struct {
		description string
		args        []string
		message     string
	}{
		{"fifo input", []string{"-inputs", fifo}, fifo + ": not a regular file (fifo)"},
		{"device input", []string{"-inputs", "/dev/zero"}, "/dev/zero: not a regular file (device)"},
		{"fifo output", []string{"-inputs", input, "-save", save}, "output_0.npy: not a regular file (fifo)"},
	} {
		t.Run(tc.description, func(t *testing.T) {
			var out, errOut bytes.Buffer
			done := make(chan int, 1)
			args := append(append([]string{"run", "-device", "cpu", "-iterations", "0"}, tc.args...), demoPath(t))
			go func() { done <- run(args, &out, &errOut) }()
			select {
			case code := <-done:
				require.Equal(t, 1, code, errOut.String())
				require.Contains(t, errOut.String(), tc.message)
			case <-time.After(5 * time.Second):
				t.Fatal("slimcuda run did not return within 5 s")
			}
		})
	}
}

// Every slimcuda dtype goes through .npy both ways (bfloat16 as '<u2' bits).
func TestNPYRoundTripsEveryDType(t *testing.T) {
	for _, dt := range []slimcuda.DType{slimcuda.Uint8, slimcuda.Int8, slimcuda.Int16, slimcuda.Int32, slimcuda.Int64,
		slimcuda.Float16, slimcuda.Float32, slimcuda.Float64, slimcuda.Bool, slimcuda.BFloat16} {
		raw := make([]byte, 6*dt.Size())
		for i := range raw {
			raw[i] = byte(i % 2) // valid for every dtype, bool included
		}
		var file bytes.Buffer
		require.NoError(t, npy.Write(&file, npy.Array{DType: npy.DType(dt.String()), Shape: []int64{2, 3}, Data: raw}))
		p := filepath.Join(t.TempDir(), "x.npy")
		require.NoError(t, os.WriteFile(p, file.Bytes(), 0o644))
		x, err := readNPY(p, slimcuda.CPUDevice)
		require.NoError(t, err, dt)
		info, err := x.Info()
		require.NoError(t, err)
		require.Equal(t, dt, info.DType)
		require.Equal(t, []int64{2, 3}, info.Sizes)
		dir := t.TempDir()
		require.NoError(t, saveOutputs(dir, []*slimcuda.Tensor{x}))
		x.Close()
		saved, err := os.ReadFile(filepath.Join(dir, "output_0.npy"))
		require.NoError(t, err)
		require.Equal(t, file.Bytes(), saved, dt)
	}
}
