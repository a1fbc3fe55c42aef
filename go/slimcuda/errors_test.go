// SPDX-License-Identifier: Apache-2.0

package slimcuda

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func errorIs(err error, code ErrorCode) bool { return errors.Is(err, code) }

func containsMessage(err error, msg string) bool {
	var e *Error
	return errors.As(err, &e) && strings.Contains(e.Message, msg)
}

func TestErrorsWrapTheirCode(t *testing.T) {
	err := copyRaw(&DeviceBuffer{size: 4}, nil, 4, true, nil)
	require.ErrorIs(t, err, ErrInvalidArgument)
	require.NotErrorIs(t, err, ErrInternal)
	var e *Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, ErrInvalidArgument, e.Code)
	require.Contains(t, e.Error(), "slimcuda: ")
	require.Contains(t, e.Message, "slimcuda_copy_host_to_device")
	require.Equal(t, "InvalidArgument", ErrInvalidArgument.String())
	require.Equal(t, "ErrorCode(0x77)", ErrorCode(0x77).String())
	for code, name := range codeNames {
		got, ok := CodeByName(name)
		require.True(t, ok)
		require.Equal(t, code, got)
	}
	_, ok := CodeByName("NoSuchCode")
	require.False(t, ok)
}

// An error reads once ("slimcuda: Load: NotFound: ...") and wraps its OS cause.
func TestErrorsReadOnceAndWrapTheOSCause(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.slimcuda")
	_, err := Load(missing)
	require.ErrorIs(t, err, ErrNotFound)
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.True(t, strings.HasPrefix(err.Error(), "slimcuda: Load: NotFound: "), err.Error())
	require.NotContains(t, err.Error(), "slimcuda: NotFound", "the code is named once, without a second prefix")
	err = Pack(filepath.Join(t.TempDir(), "none.json"), filepath.Join(t.TempDir(), "x.slimcuda"))
	require.ErrorIs(t, err, fs.ErrNotExist)
	_, err = Load(t.TempDir()) // a directory: not an OS "does not exist"
	require.ErrorIs(t, err, ErrInvalidArgument)
	require.NotErrorIs(t, err, fs.ErrNotExist)
	require.Equal(t, "slimcuda: X: InvalidState", (&Error{Op: "X", Code: ErrInvalidState}).Error())
}
