// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slimcuda/slimcuda/go/internal/fixture"
	"github.com/slimcuda/slimcuda/go/slimcuda"
	"github.com/stretchr/testify/require"
)

func gpu(t *testing.T) bool {
	n, err := slimcuda.DeviceCount()
	require.NoError(t, err)
	if n == 0 && fixture.GPURequired() {
		t.Fatal("SLIMCUDA_REQUIRE_GPU=1 but no GPU")
	}
	return n > 0
}

func TestDefaultCommandIsInfo(t *testing.T) {
	var a, b, e bytes.Buffer
	require.Equal(t, 0, run(nil, &a, &e))
	require.Equal(t, 0, run([]string{"info"}, &b, &e))
	require.Equal(t, a.String(), b.String())
}

// Bad usage exits 2 with a message on stderr that says what is wrong.
func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		description string
		args        []string
		message     string
	}{
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"extra argument", []string{"info", "a.pt2", "extra"}, `unexpected argument "extra" after a.pt2`},
		{"bench-load without a model", []string{"bench-load"}, "missing MODEL"},
		{"bench-load n", []string{"bench-load", "-n", "0", "m.pt2"}, "-n must be >= 1"},
		{"unknown flag", []string{"info", "-nosuchflag"}, "flag provided but not defined: -nosuchflag"},
		{"bad flag value", []string{"run", "-device", "tpu"}, `-device "tpu": want auto, cpu or cuda`},
		{"two packages", []string{"run", "a", "b"}, `unexpected argument "b" after a`},
		{"a flag after the model is parsed", []string{"run", "my.slimcuda", "-device", "tpu"}, `-device "tpu"`},
		{"a flag's value after the model", []string{"pack", "m.json", "-o"}, "flag needs an argument: -o"},
		{"flags after the model, an extra argument", []string{"info", "a.pt2", "-json", "b.pt2"},
			`unexpected argument "b.pt2" after a.pt2`},
		{"no manifest", []string{"pack"}, "missing MANIFEST"},
		{"-values without -json", []string{"run", "-values"}, "-values needs -json"},
		{"bench iterations", []string{"bench", "-iterations", "0"}, "-iterations must be positive"},
		{"run iterations", []string{"run", "-iterations", "-1"}, "-iterations must be >= 0"},
		{"help of an unknown command", []string{"help", "frobnicate"}, `unknown command "frobnicate"`},
		{"info -device without a model", []string{"info", "-device", "cpu"}, "-device needs a MODEL"},
		{"info -model-name without a model", []string{"info", "-model-name", "m"}, "-model-name needs a MODEL"},
		{"info bad -device", []string{"info", "-device", "tpu", "m.pt2"}, `-device "tpu": want auto, cpu or cuda`},
		{"bench-load bad -device", []string{"bench-load", "-device", "tpu", "m.pt2"}, `-device "tpu"`},
	} {
		t.Run(tc.description, func(t *testing.T) {
			var out, errOut bytes.Buffer
			require.Equal(t, 2, run(tc.args, &out, &errOut), "%v: %s", tc.args, errOut.String())
			require.Contains(t, errOut.String(), tc.message)
			require.Empty(t, out.String())
		})
	}
}

// Help is output asked for: stdout, exit status 0, for -h, --help and `help COMMAND` alike,
// for every command.
func TestHelpGoesToStdout(t *testing.T) {
	require.Len(t, commands, 5)
	for cmd := range commands {
		for _, args := range [][]string{{cmd, "-h"}, {cmd, "--help"}, {"help", cmd}} {
			var out, errOut bytes.Buffer
			require.Equal(t, 0, run(args, &out, &errOut), "%v", args)
			require.True(t, strings.HasPrefix(out.String(), "usage: slimcuda "+cmd), "%v: %q", args, out.String())
			require.Empty(t, errOut.String(), "%v", args)
		}
	}
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		var out, errOut bytes.Buffer
		require.Equal(t, 0, run(args, &out, &errOut))
		require.True(t, strings.HasPrefix(out.String(), "usage: slimcuda"))
		require.Contains(t, out.String(), "Exit status: 0 success, 1 failure, 2 bad usage.")
	}
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"help", "run"}, &out, &errOut))
	require.Contains(t, out.String(), "-inputs")
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		var out, errOut bytes.Buffer
		require.Equal(t, 0, run(args, &out, &errOut))
		require.Equal(t, "slimcuda "+slimcuda.Version()+" (libslimcuda "+slimcuda.Version()+")\n", out.String())
	}
}

// Progress lines are for people at a terminal: none on a pipe, a file or a buffer.
func TestNoProgressOffATerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	require.NoError(t, err)
	defer f.Close()
	require.False(t, isTerminal(f))
	require.False(t, isTerminal(&bytes.Buffer{}))
	progress(f)("loading %s", "x")
	st, err := f.Stat()
	require.NoError(t, err)
	require.Zero(t, st.Size())
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"run", "-device", "cpu", "-iterations", "0", demoPath(t)}, &out, &errOut))
	require.Empty(t, errOut.String())
}

// Under `bazel run`, relative paths are the user's ($BUILD_WORKING_DIRECTORY), for reading
// (PACKAGE, MANIFEST, -inputs) and for writing (-o, -save).
func TestRelativePathsAreTheUsersUnderBazelRun(t *testing.T) {
	user := t.TempDir()
	demo, err := os.ReadFile(demoPath(t))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(user, "my.slimcuda"), demo, 0o644))
	t.Setenv("BUILD_WORKING_DIRECTORY", user)
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"run", "-device", "cpu", "-iterations", "0", "-save", "out", "my.slimcuda"}, &out,
		&errOut), errOut.String())
	require.Contains(t, out.String(), filepath.Join(user, "my.slimcuda"))
	require.FileExists(t, filepath.Join(user, "out", "output_0.npy"))
	require.Equal(t, filepath.Join(user, "x"), userPath("x"))
	require.Equal(t, "/abs/x", userPath("/abs/x"))
}
