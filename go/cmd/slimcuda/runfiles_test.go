// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The demo is found in runfiles under either main-repository name, by manifest or tree.
func TestDemoFoundInRunfiles(t *testing.T) {
	for _, repo := range []string{"_main", "slimcuda"} {
		t.Run(repo, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, repo, demoRunfile)
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, []byte("x"), 0o644))
			t.Setenv("SLIMCUDA_DEMO_PACKAGE", "")
			t.Setenv("RUNFILES_MANIFEST_FILE", "")
			t.Setenv("RUNFILES_DIR", dir)
			got, err := demoPackage()
			require.NoError(t, err)
			require.Equal(t, p, got)
			manifest := filepath.Join(t.TempDir(), "MANIFEST")
			require.NoError(t, os.WriteFile(manifest, []byte(repo+"/other /x\n"+repo+"/"+demoRunfile+" /elsewhere/demo\n"), 0o644))
			t.Setenv("RUNFILES_MANIFEST_FILE", manifest)
			got, err = demoPackage()
			require.NoError(t, err)
			require.Equal(t, "/elsewhere/demo", got)
		})
	}
}
