// Command slimcuda runs model packages with libslimcuda and reports on the machine.
//
// Usage:
//
//	slimcuda info                    the CUDA runtime, driver and GPUs (says so plainly without a GPU)
//	slimcuda run [flags] [PACKAGE]   run a model package (default: the demo) and summarize its outputs
//	slimcuda pack [-o OUT] MANIFEST  write a model package from a JSON manifest
//	slimcuda bench [flags]           copies and allocations through slimcuda as ratios to raw CUDA
//
// Exit status: 0 success, 1 failure, 2 bad usage.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

const usage = `usage: slimcuda <command> [flags]

commands:
  info    show the CUDA runtime, driver and devices (the default)
  run     run a model package (default: the demo package) and summarize its outputs
  pack    write a model package from a JSON manifest
  bench   time copies and allocations through slimcuda against raw CUDA

Run 'slimcuda <command> -h' for a command's flags.
`

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// errUsage marks errors that were the caller's (exit status 2).
var errUsage = errors.New("usage")

type command func(args []string, stdout, stderr io.Writer) error

// run executes one command and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	name := "info"
	if len(args) > 0 {
		name, args = args[0], args[1:]
	}
	commands := map[string]command{"info": info, "run": runModel, "pack": pack, "bench": benchCmd}
	if name == "-h" || name == "-help" || name == "--help" || name == "help" {
		fmt.Fprint(stdout, usage)
		return 0
	}
	cmd, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "slimcuda: unknown command %q\n%s", name, usage)
		return 2
	}
	switch err := cmd(args, stdout, stderr); {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	default:
		fmt.Fprintln(stderr, err)
		return 1
	}
}

// newFlags makes a command's flag set; usageLine and doc form its -h text.
func newFlags(name, usageLine, doc string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: slimcuda %s\n\n%s\n", usageLine, doc)
		if hasFlags(fs) {
			fmt.Fprintln(stderr, "\nflags:")
			fs.PrintDefaults()
		}
	}
	return fs
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// parse parses flags and checks the number of positional arguments.
func parse(fs *flag.FlagSet, args []string, minArgs, maxArgs int) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if fs.NArg() < minArgs || fs.NArg() > maxArgs {
		fs.Usage()
		return errUsage
	}
	return nil
}

// usageError reports a bad flag value with the command's usage (exit status 2).
func usageError(fs *flag.FlagSet, stderr io.Writer, format string, a ...any) error {
	fmt.Fprintf(stderr, "slimcuda %s: %s\n", fs.Name(), fmt.Sprintf(format, a...))
	fs.Usage()
	return errUsage
}
