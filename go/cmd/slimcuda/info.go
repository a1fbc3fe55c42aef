package main

import (
	"fmt"
	"io"

	"github.com/slimcuda/slimcuda/go/slimcuda"
)

func info(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("info", "info", "Shows the CUDA runtime and driver versions and every device.", stderr)
	if err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	runtime, driver, err := slimcuda.CUDAVersions()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "CUDA runtime %s, driver %s\n", runtime, driver)
	n, err := slimcuda.DeviceCount()
	if err != nil {
		return err
	}
	if n == 0 {
		fmt.Fprintln(stdout, "no GPU: no usable CUDA device (work runs on the CPU path)")
		return nil
	}
	fmt.Fprintf(stdout, "%d CUDA device(s):\n", n)
	for i := 0; i < n; i++ {
		p, err := slimcuda.Properties(slimcuda.CUDADevice(i))
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "  %d: %s, compute capability %s, %.1f GiB\n", i, p.Name, p.ComputeCapability,
			float64(p.TotalMemory)/(1<<30))
	}
	return nil
}
