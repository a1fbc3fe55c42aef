// SPDX-License-Identifier: Apache-2.0

// Command slimcuda runs model packages with libslimcuda and reports on the machine.
//
// Usage:
//
//	slimcuda info [-json]                 the CUDA runtime, driver and GPUs (says so plainly without a GPU)
//	slimcuda info [-json] MODEL           also a model's device and input/output specs
//	slimcuda run [flags] [MODEL]          run a .pt2 or a model package (default: the demo) and summarize its outputs
//	slimcuda pack [-o OUT] MANIFEST       write a model package from a JSON manifest
//	slimcuda bench [flags]                copies and allocations through slimcuda as ratios to raw CUDA
//	slimcuda bench-load [flags] MODEL     time slimcuda.Load of a .pt2 or a package
//	slimcuda help [COMMAND]               this text, or a command's flags
//	slimcuda --version                    the version of the CLI and of libslimcuda
//
// Conventions (clig.dev): help (-h, --help, help COMMAND) goes to stdout with exit status
// 0; results go to stdout, messages and progress to stderr; progress lines appear only
// when stderr is a terminal; -json output is valid JSON (non-finite numbers as strings).
// Relative paths are the user's: under `bazel run` they are resolved against the directory
// the command was started in ($BUILD_WORKING_DIRECTORY), not Bazel's runfiles tree.
//
// Exit status: 0 success, 1 failure, 2 bad usage.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/slimcuda/slimcuda/go/slimcuda"
)

const usage = `usage: slimcuda <command> [flags] [arguments]

commands:
  info    show the CUDA runtime, driver and devices (the default)
  run     run a .pt2 or a model package (default: the demo package) and summarize its outputs
  pack    write a model package from a JSON manifest
  bench   time copies and allocations through slimcuda against raw CUDA
  bench-load  time loading a .pt2 or a model package
  help    show this text, or 'slimcuda help COMMAND' for a command's flags

flags:
  -h, --help     show this text
  --version      print the version of slimcuda and exit

Flags may come before or after a command's arguments ('--' ends them).
Exit status: 0 success, 1 failure, 2 bad usage.
Run 'slimcuda help <command>' for a command's flags.
`

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// errUsage marks errors that were the caller's (exit status 2); the message was printed.
var errUsage = errors.New("usage")

// command runs one subcommand; it gets a flag set that newFlags made for it.
type command struct {
	usageLine, doc string
	define         func(fs *flag.FlagSet) func(c *cmdContext) error
}

// cmdContext is what a command's body sees.
type cmdContext struct {
	fs             *flag.FlagSet
	stdout, stderr io.Writer
}

var commands = map[string]command{
	"info":       infoCommand,
	"run":        runCommand,
	"pack":       packCommand,
	"bench":      benchCommand,
	"bench-load": benchLoadCommand,
}

// versionLine is what --version prints.
func versionLine() string {
	return fmt.Sprintf("slimcuda %s (libslimcuda %s)", slimcuda.HeaderVersion(), slimcuda.Version())
}

// run executes one command and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	name := "info"
	if len(args) > 0 {
		name, args = args[0], args[1:]
	}
	switch name {
	case "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	case "--version", "-version", "version":
		fmt.Fprintln(stdout, versionLine())
		return 0
	case "help":
		if len(args) == 0 {
			fmt.Fprint(stdout, usage)
			return 0
		}
		cmd, ok := commands[args[0]]
		if !ok || len(args) > 1 {
			fmt.Fprintf(stderr, "slimcuda help: unknown command %q (commands: %s)\n", strings.Join(args, " "), names())
			return 2
		}
		fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
		cmd.define(fs)
		printUsage(stdout, fs, cmd)
		return 0
	}
	cmd, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "slimcuda: unknown command %q (commands: %s; see 'slimcuda --help')\n", name, names())
		return 2
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // parse errors are reported below, help goes to stdout
	fs.Usage = func() {}
	body := cmd.define(fs)
	if err := fs.Parse(flagsFirst(fs, args)); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(stdout, fs, cmd)
			return 0
		}
		fmt.Fprintf(stderr, "slimcuda %s: %v\n", name, err)
		printUsage(stderr, fs, cmd)
		return 2
	}
	switch err := body(&cmdContext{fs: fs, stdout: stdout, stderr: stderr}); {
	case err == nil:
		return 0
	case errors.Is(err, errUsage):
		return 2
	default:
		fmt.Fprintln(stderr, forUser(name, err))
		return 1
	}
}

// flagsFirst moves the flags among args in front of the other arguments, keeping each
// group's order, so `slimcuda run model.pt2 -json` means `slimcuda run -json model.pt2`
// (Go's flag package stops at the first non-flag). A flag that takes a value keeps the next
// argument with it unless written -flag=value; "--" ends the flags, and what follows it
// stays arguments however it looks.
func flagsFirst(fs *flag.FlagSet, args []string) []string {
	var flags, rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			rest = append(rest, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if f := fs.Lookup(name); f != nil && !isBoolFlag(f) {
			if i+1 == len(args) {
				return flags // its value is missing: Parse says so
			}
			i++
			flags = append(flags, args[i])
		}
	}
	if len(rest) == 0 {
		return flags
	}
	return append(append(flags, "--"), rest...)
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// cEntryName is the C function an error message of libslimcuda starts with
// ("slimcuda_model_load_file_with: "): for C callers; a CLI user never called it.
var cEntryName = regexp.MustCompile(`^slimcuda_[a-z0-9_]+: `)

// forUser rewrites a library error for the command line: "slimcuda run: " and the
// library's message without the C function's name, with the error code's name (what
// errors.Is and the C ABI call it) in parentheses; any other error as it is.
func forUser(cmd string, err error) string {
	var e *slimcuda.Error
	if !errors.As(err, &e) || err != error(e) {
		return err.Error()
	}
	msg := cEntryName.ReplaceAllString(e.Message, "")
	if msg == "" {
		msg = e.Code.String()
	}
	out := fmt.Sprintf("slimcuda %s: %s (%s)", cmd, msg, e.Code.String())
	for _, h := range hints {
		if strings.Contains(msg, h.when) {
			out += "\n" + h.say
		}
	}
	return out
}

// hints say what to do about the errors a new user meets first.
var hints = []struct{ when, say string }{
	{"is not a model file", "give a .pt2 (torch._inductor.aoti_compile_and_package writes one) or a slimcuda " +
		"package (slimcuda pack writes one)"},
	{"no CUDA device", "this model runs on an NVIDIA GPU; 'slimcuda info MODEL' describes it without one"},
	{"No such file or directory", "check the path (relative paths start in the current directory)"},
}

func names() string {
	var n []string
	for k := range commands {
		n = append(n, k)
	}
	sort.Strings(n)
	return strings.Join(n, ", ")
}

// printUsage writes a command's help: its usage line, description and flags.
func printUsage(w io.Writer, fs *flag.FlagSet, cmd command) {
	fmt.Fprintf(w, "usage: slimcuda %s\n\n%s\n", cmd.usageLine, cmd.doc)
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		fmt.Fprintln(w, "\nflags:")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
}

// args checks the positional arguments: between minArgs and maxArgs of them (flags among
// them were moved in front by flagsFirst).
func (c *cmdContext) args(minArgs, maxArgs int, what string) error {
	rest := c.fs.Args()
	switch {
	case len(rest) > maxArgs && maxArgs == 0:
		return c.usageError("unexpected argument %q: %s takes no arguments", rest[0], c.fs.Name())
	case len(rest) > maxArgs:
		return c.usageError("unexpected argument %q after %s: %s takes %s", rest[maxArgs], rest[maxArgs-1], c.fs.Name(), what)
	case len(rest) < minArgs:
		return c.usageError("missing %s", what)
	}
	return nil
}

// usageError reports bad usage with the command's help on stderr (exit status 2).
func (c *cmdContext) usageError(format string, a ...any) error {
	fmt.Fprintf(c.stderr, "slimcuda %s: %s\n", c.fs.Name(), fmt.Sprintf(format, a...))
	fmt.Fprintf(c.stderr, "run 'slimcuda help %s' for usage\n", c.fs.Name())
	return errUsage
}

// userPath resolves a path the user gave. `bazel run` starts the binary inside its
// runfiles tree and says where the user was in $BUILD_WORKING_DIRECTORY; relative paths
// are the user's, so they are resolved against it.
func userPath(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	if wd := os.Getenv("BUILD_WORKING_DIRECTORY"); wd != "" {
		return filepath.Join(wd, p)
	}
	return p
}

// isTerminal reports whether w is a terminal (a character device), where progress lines
// belong; pipes, files and test buffers get none.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progress returns a function that prints "slimcuda: ..." lines on stderr when stderr is a
// terminal, and nothing otherwise.
func progress(stderr io.Writer) func(format string, a ...any) {
	if !isTerminal(stderr) {
		return func(string, ...any) {}
	}
	return func(format string, a ...any) { fmt.Fprintf(stderr, "slimcuda: "+format+"\n", a...) }
}
