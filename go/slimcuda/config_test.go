// SPDX-License-Identifier: Apache-2.0

package slimcuda

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSetConfigAndConfig(t *testing.T) {
	for _, tc := range []struct {
		description, name, value, want string
	}{
		{"an integer", "SLIMCUDA_STAGING_THRESHOLD", "0", "0"},
		{"a bool in any case, canonical", "SLIMCUDA_GEMM_PLAIN", "Yes", "1"},
		{"a bool's false words", "SLIMCUDA_STAGING_FLAGS", "off", "0"},
		{"an enum word in any case", "SLIMCUDA_CONV", "LEGACY", "legacy"},
		{"an empty value is the default", "SLIMCUDA_STAGING_BUFFERS", "", "6"},
		{"a path", "TMPDIR", "/scratch", "/scratch"},
	} {
		t.Run(tc.description, func(t *testing.T) {
			before, err := Config(tc.name)
			require.NoError(t, err)
			require.NoError(t, SetConfig(tc.name, tc.value))
			got, err := Config(tc.name)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			require.NoError(t, ResetConfig(tc.name))
			got, err = Config(tc.name)
			require.NoError(t, err)
			require.Equal(t, before, got, "ResetConfig: the environment's value or the default again")
		})
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		description string
		call        func() error
		message     string
	}{
		{"SetConfig: an unknown name", func() error { return SetConfig("SLIMCUDA_NO_SUCH_SETTING", "1") },
			`no setting is called "SLIMCUDA_NO_SUCH_SETTING"`},
		{"SetConfig: names are exact", func() error { return SetConfig("slimcuda_conv", "auto") }, "no setting is called"},
		{"SetConfig: a bad integer", func() error { return SetConfig("SLIMCUDA_STAGING_CHUNK", "4MiB") },
			"SLIMCUDA_STAGING_CHUNK=4MiB is not a non-negative decimal integer"},
		{"SetConfig: a bad bool", func() error { return SetConfig("SLIMCUDA_GEMM_PLAIN", "2") },
			"is not 1/true/yes/on or 0/false/no/off"},
		{"SetConfig: a bad word", func() error { return SetConfig("SLIMCUDA_ATTENTION", "fastest") },
			"is not one of auto, kernel, cudnn"},
		{"SetConfig: a NUL in the value", func() error { return SetConfig("SLIMCUDA_STAGING_BUFFERS", "6\x00x") }, "NUL"},
		{"Config: a NUL in the name", func() error { _, err := Config("TMPDIR\x00"); return err }, "NUL"},
		{"ResetConfig: an unknown name", func() error { return ResetConfig("") }, "no setting is called"},
		{"Config: an unknown name", func() error { _, err := Config("NOPE"); return err }, "slimcuda_config_get"},
	} {
		t.Run(tc.description, func(t *testing.T) {
			err := tc.call()
			require.ErrorIs(t, err, ErrInvalidArgument)
			require.NotErrorIs(t, err, ErrInvalidState)
			require.Contains(t, err.Error(), tc.message)
			require.True(t, strings.HasPrefix(err.Error(), "slimcuda: "), err.Error())
		})
	}
	got, err := Config("SLIMCUDA_STAGING_CHUNK")
	require.NoError(t, err)
	require.Equal(t, "4194304", got, "a bad value changes nothing")
}

// A setting read once at its first use is fixed by it: the caching allocator, once a GPU
// allocation has asked whether to cache.
func TestReadOnceSettingIsFixedByItsUse(t *testing.T) {
	requireGPU(t)
	b, err := Alloc(256)
	require.NoError(t, err)
	defer b.Close()
	now, err := Config("SLIMCUDA_CACHING_ALLOCATOR")
	require.NoError(t, err)
	other := map[string]string{"0": "1", "1": "0"}[now]
	err = SetConfig("SLIMCUDA_CACHING_ALLOCATOR", other)
	require.ErrorIs(t, err, ErrInvalidState)
	require.Contains(t, err.Error(), "read once")
	require.NoError(t, SetConfig("SLIMCUDA_CACHING_ALLOCATOR", now), "the value in force may always be set")
}

type records struct {
	mu   sync.Mutex
	msgs []string
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, rec.Level.String()+" "+rec.Message)
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

func TestSetLoggerNilRestoresTheDefault(t *testing.T) {
	var r records
	SetLogger(slog.New(&r))
	SetLogger(nil)
	SetLogger(nil)
	require.Nil(t, logger.Load())
	require.Equal(t, slog.LevelDebug, slogLevel(10))
	require.Equal(t, slog.LevelInfo, slogLevel(20))
	require.Equal(t, slog.LevelWarn, slogLevel(30))
	require.Equal(t, slog.LevelError, slogLevel(40))
}

// A bad value in the environment is logged once, when the library first reads its settings,
// to the logger set before then: this test binary again, in a process with such a value
// (TestMain sends it to configChild).
func TestLoggerReceivesABadEnvironmentValue(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SLIMCUDA_CONFIG_CHILD=1", "SLIMCUDA_STAGING_BUFFERS=lots", "SLIMCUDA_LOG_LEVEL=")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Run(), out.String())
	require.Equal(t, "WARN SLIMCUDA_STAGING_BUFFERS=lots is not a non-negative decimal integer; using the default, 6\n"+
		"value 6\n", out.String())
}

// configChild: the logger first, then the library's first read of its settings.
func configChild() int {
	var r records
	SetLogger(slog.New(&r))
	v, err := Config("SLIMCUDA_STAGING_BUFFERS")
	if err != nil {
		fmt.Println(err)
		return 1
	}
	_, _ = Config("SLIMCUDA_STAGING_BUFFERS") // reported once: nothing more
	SetLogger(nil)
	for _, m := range r.msgs {
		fmt.Println(m)
	}
	fmt.Println("value", v)
	return 0
}
