// SPDX-License-Identifier: Apache-2.0

package slimcuda

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/slimcuda/slimcuda/go/internal/fixture"
	"github.com/stretchr/testify/require"
)

// Reading files through Load and Pack: the codes and messages of C's read_regular_file
// (csrc/c_api/file_reader_test.cc checks the same from C).

// within fails the test when call does not return in 5 s (a FIFO that blocks, /dev/zero
// read without end); the goroutine is then left behind.
func within(t *testing.T, call func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("did not return within 5 s")
		return nil
	}
}

func writeManifest(t *testing.T, dir, name, so, weights string) string {
	t.Helper()
	text := `{"libraries": [{"device": "cpu", "so": "` + so + `", "methods": [{"name": "forward",
	  "inputs": [{"name": "x", "dtype": "int64", "sizes": [3], "device": "cpu"}],
	  "outputs": [{"name": "y", "dtype": "bool", "sizes": [3], "device": "cpu"}]}]}]`
	if weights != "" {
		text += `, "weights": "` + weights + `"`
	}
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(text+"}"), 0o644))
	return p
}

func TestFilesThatAreNotRegularOrTooLarge(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "m.so"), []byte("not really a library"), 0o644))
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	big := filepath.Join(dir, "big.slimcuda")
	f, err := os.Create(big)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(3<<30)) // sparse
	require.NoError(t, f.Close())
	out := filepath.Join(dir, "out.slimcuda")

	files := []struct {
		description string
		path        string
		code        ErrorCode
		message     string
	}{
		{"missing", filepath.Join(dir, "missing"), ErrNotFound, "No such file or directory"},
		{"directory", dir, ErrInvalidArgument, "is not a regular file (directory)"},
		{"fifo", fifo, ErrInvalidArgument, "is not a regular file (fifo)"},
		{"char device", "/dev/zero", ErrInvalidArgument, "is not a regular file (device)"},
		{"over the cap", big, ErrInvalidArgument, "3221225472 bytes, over the cap of 2147483646 bytes"},
	}
	for _, file := range files {
		calls := []struct {
			description string
			call        func() error
			message     string
		}{
			{"Load", func() error { _, err := Load(file.path, LoadOnDevice(CPUDevice)); return err }, file.message},
			{"Pack manifest", func() error { return Pack(file.path, out) }, file.message},
			{"Pack so", func() error { return Pack(writeManifest(t, dir, "so.json", file.path, ""), out) }, file.message},
			{"Pack weights", func() error {
				return Pack(writeManifest(t, dir, "weights.json", "m.so", file.path), out)
			}, file.message},
		}
		if file.path == big {
			calls[1].message = "over the cap of 16777216 bytes" // the manifest's own cap
		}
		for _, c := range calls {
			t.Run(file.description+"/"+c.description, func(t *testing.T) {
				err := within(t, c.call)
				require.ErrorIs(t, err, file.code)
				require.ErrorContains(t, err, c.message)
			})
		}
	}
}

// Pack writes its package to a regular file only (csrc/c_api/file_reader_test.cc checks
// the same from C): a FIFO nobody reads blocked Pack forever before.
func TestPackWritesOnlyARegularFile(t *testing.T) {
	dir := t.TempDir()
	so, err := filepath.Abs(fixture.Runfile(t, "SLIMCUDA_TEST_LIBRARY", "models/testing/libconstant_1.so"))
	require.NoError(t, err)
	manifest := writeManifest(t, dir, "real.json", so, "")
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	missing := filepath.Join(dir, "missing", "out.slimcuda")
	for _, tc := range []struct {
		description string
		out         string
		code        ErrorCode
		message     string
	}{
		{"fifo nobody reads", fifo, ErrInvalidArgument, "is not a regular file (fifo)"},
		{"directory", dir, ErrInvalidArgument, "is not a regular file (directory)"},
		{"char device", "/dev/null", ErrInvalidArgument, "is not a regular file (device)"},
		{"missing folder", missing, ErrAccessFailed, "cannot create " + missing + ": No such file or directory"},
	} {
		t.Run(tc.description, func(t *testing.T) {
			err := within(t, func() error { return Pack(manifest, tc.out) })
			require.ErrorIs(t, err, tc.code)
			require.ErrorContains(t, err, tc.message)
		})
	}
	out := filepath.Join(dir, "out.slimcuda")
	require.NoError(t, os.WriteFile(out, make([]byte, 1<<20), 0o644))
	require.NoError(t, Pack(manifest, out))
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Less(t, len(data), 1<<20, "the longer file there before was not replaced whole")
	require.NoError(t, CheckPackage(data))
}

// The child half of TestPermissionDeniedIsAccessFailed: run as uid 65534, it prints the
// code and message of Load and Pack on the paths it is given and exits. An init rather
// than a test: this file's target has no TestMain of its own, and a test that only the
// child runs would be a skip, for no reason the GPU run accepts, in every other run.
func init() {
	path := os.Getenv("SLIMCUDA_PERMISSION_CHILD")
	if path == "" {
		return
	}
	_, err := Load(path, LoadOnDevice(CPUDevice))
	fmt.Printf("Load: %v\n", err)
	err = Pack(os.Getenv("SLIMCUDA_PERMISSION_MANIFEST"), "/dev/null")
	fmt.Printf("Pack: %v\n", err)
	os.Exit(0)
}

// copyFile copies src to dst with mode 0755.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// credentialsRefused reports whether err, from starting a child with credentials, is the
// kernel refusing the switch to them (setgroups, setgid or setuid: EPERM, or EINVAL for an
// id a user namespace does not map): the one failure that says this machine cannot run the
// check, rather than that the test or the library is broken.
func credentialsRefused(err error) bool {
	var exit *exec.ExitError
	return !errors.As(err, &exit) && (errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL))
}

// asNobody runs this test binary as the permission child (init above), as uid/gid 65534
// with env, and returns its output: the binary and its shared libraries (bazel's, under
// /root, which nobody cannot enter) are copied into dir first. It skips t only when the
// kernel refuses to start the child as nobody; a child that started and then failed,
// crashed included, fails t with its output.
func asNobody(t *testing.T, dir string, env ...string) string {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	libs := filepath.Join(dir, "lib")
	require.NoError(t, os.Mkdir(libs, 0o755))
	bin := filepath.Join(dir, "test_binary")
	require.NoError(t, copyFile(self, bin))
	maps, err := os.Open("/proc/self/maps")
	require.NoError(t, err)
	defer maps.Close()
	seen := map[string]bool{}
	for s := bufio.NewScanner(maps); s.Scan(); {
		fields := strings.Fields(s.Text())
		p := fields[len(fields)-1]
		if strings.Contains(p, ".so") && !strings.HasPrefix(p, "/lib") && !strings.HasPrefix(p, "/usr") && !seen[p] {
			seen[p] = true
			require.NoError(t, copyFile(p, filepath.Join(libs, filepath.Base(p))))
		}
	}
	cmd := exec.Command(bin)
	// Without bazel's test variables: the child must not chdir into runfiles, take the
	// parent's test filter or write its XML report.
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "TEST") && !strings.HasPrefix(name, "RUNFILES") &&
			!strings.HasPrefix(name, "XML_OUTPUT") && !strings.HasPrefix(name, "GO_TEST") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, append(env, "LD_LIBRARY_PATH="+libs)...)
	cmd.Dir = dir
	asRoot := os.Getuid() == 0
	if asRoot {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		if asRoot && credentialsRefused(err) {
			t.Skipf("cannot start this test binary as uid 65534 here (a user namespace without it mapped?): %v", err)
		}
		t.Fatalf("starting the child: %v", err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the child failed: %v\n%s", err, out.String())
	}
	return out.String()
}

// Only a refused switch of credentials skips the permission check: a child that ran and
// failed, or crashed, is a failure.
func TestOnlyRefusedCredentialsSkip(t *testing.T) {
	crash := exec.Command("/bin/sh", "-c", "kill -SEGV $$")
	err := crash.Run()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "the shell was killed by SIGSEGV")
	require.False(t, credentialsRefused(err), "a crash")
	require.False(t, credentialsRefused(exec.Command("/bin/sh", "-c", "exit 1").Run()), "a failure")
	require.False(t, credentialsRefused(exec.Command(filepath.Join(t.TempDir(), "missing")).Run()), "no binary")
	// What exec returns when the kernel refuses setuid or setgroups in the child before exec.
	require.True(t, credentialsRefused(&os.PathError{Op: "fork/exec", Path: "/bin/true", Err: syscall.EINVAL}))
	require.True(t, credentialsRefused(&os.PathError{Op: "fork/exec", Path: "/bin/true", Err: syscall.EPERM}))
}

// Root reads any file whatever its mode (CI runs as root), so the check runs in a child
// process as nobody.
func TestPermissionDeniedIsAccessFailed(t *testing.T) {
	dir, err := os.MkdirTemp("/tmp", "slimcuda_permission_")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	secret := filepath.Join(dir, "secret.slimcuda")
	require.NoError(t, os.WriteFile(secret, []byte("bytes"), 0o000))
	manifest := writeManifest(t, dir, "secret.json", "secret.slimcuda", "")
	out := asNobody(t, dir, "SLIMCUDA_PERMISSION_CHILD="+secret, "SLIMCUDA_PERMISSION_MANIFEST="+manifest)
	want := "AccessFailed: slimcuda_model_load_file_with: cannot open " + secret + ": Permission denied"
	require.Contains(t, out, "Load: slimcuda: Load: "+want)
	require.Contains(t, out, "Pack: slimcuda: Pack: "+"AccessFailed: slimcuda_package_pack: cannot open "+
		secret+": Permission denied")
}
