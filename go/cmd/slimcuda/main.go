// Command slimcuda is slimcuda's command-line tool.
//
// Usage:
//
//	slimcuda [info]      show the CUDA runtime, driver and devices (says so plainly without a GPU)
//
// More commands (run, pack, bench) come with the model runtime.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/slimcuda/slimcuda/go/slimcuda"
)

const usage = `usage: slimcuda <command> [flags]

commands:
  info    show the CUDA runtime, driver and devices (the default)

Run 'slimcuda <command> -h' for a command's flags.
`

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run executes one command and returns the process exit status: 0 success, 1 failure,
// 2 bad usage.
func run(args []string, stdout, stderr io.Writer) int {
	cmd := "info"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "info":
		return info(args, stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "slimcuda: unknown command %q\n%s", cmd, usage)
	return 2
}

func info(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("info", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: slimcuda info\n\nShows the CUDA runtime and driver versions and every device.")
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	runtime, driver, err := slimcuda.CUDAVersions()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	fmt.Fprintf(stdout, "CUDA runtime %s, driver %s\n", runtime, driver)
	n, err := slimcuda.DeviceCount()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if n == 0 {
		fmt.Fprintln(stdout, "no GPU: no usable CUDA device (work runs on the CPU path)")
		return 0
	}
	fmt.Fprintf(stdout, "%d CUDA device(s):\n", n)
	for i := 0; i < n; i++ {
		p, err := slimcuda.Properties(i)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		fmt.Fprintf(stdout, "  %d: %s, compute capability %s, %.1f GiB\n", i, p.Name, p.ComputeCapability,
			float64(p.TotalMemory)/(1<<30))
	}
	return 0
}
