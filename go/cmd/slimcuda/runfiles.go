// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// The main repository's name in runfiles: "_main" under bzlmod, the WORKSPACE name
// ("slimcuda") without it.
var mainRepos = []string{"_main", "slimcuda"}

// runfile finds a file of this repository (a repository-relative path) in the runfiles of
// a `bazel run` or `bazel test`: through $RUNFILES_MANIFEST_FILE (lines "REPO/PATH
// ABSOLUTE"), else the tree $RUNFILES_DIR, $TEST_SRCDIR or ARGV0.runfiles, under either
// main-repository name.
//
// Why not a runfiles library: rules_go v0.24.3 (the newest that loads in the offline Bazel
// 4.2.3) has no go/runfiles package, and its //go/tools/bazel Runfile() is importable only
// inside Bazel: the CLI is also built with plain `go build` (go vet, staticcheck, go test
// ./...), which would need rules_go as a go.mod requirement, one that bzlmod's go_deps
// would then resolve against the rules_go bazel_dep. What it does is this function's
// lookup, manifest and directory alike, so the same lookup lives here.
func runfile(rel string) (string, bool) {
	if m := os.Getenv("RUNFILES_MANIFEST_FILE"); m != "" {
		if p, ok := fromManifest(m, rel); ok {
			return p, true
		}
	}
	var dirs []string
	for _, env := range []string{"RUNFILES_DIR", "TEST_SRCDIR"} {
		if d := os.Getenv(env); d != "" {
			dirs = append(dirs, d)
		}
	}
	if exe, err := os.Executable(); err == nil {
		dirs = append(dirs, exe+".runfiles")
	}
	dirs = append(dirs, os.Args[0]+".runfiles")
	for _, d := range dirs {
		for _, repo := range mainRepos {
			if p := filepath.Join(d, repo, rel); fileExists(p) {
				return p, true
			}
		}
	}
	return "", false
}

func fromManifest(manifest, rel string) (string, bool) {
	f, err := os.Open(manifest)
	if err != nil {
		return "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		key, target, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		for _, repo := range mainRepos {
			if key == repo+"/"+rel {
				return target, true
			}
		}
	}
	return "", false
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
