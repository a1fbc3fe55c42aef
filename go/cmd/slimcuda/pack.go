package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/slimcuda/slimcuda/go/slimcuda"
)

func pack(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("pack", "pack [-o OUT] MANIFEST",
		"Writes a model package from a JSON manifest naming the model libraries (one per device type) and\n"+
			"their inputs and outputs (format: csrc/package/manifest.h). The package is checked as a reader would.",
		stderr)
	out := fs.String("o", "", "output file (default: MANIFEST with the extension .slimcuda)")
	if err := parse(fs, args, 1, 1); err != nil {
		return err
	}
	manifest := fs.Arg(0)
	if *out == "" {
		*out = strings.TrimSuffix(manifest, ".json") + ".slimcuda"
	}
	if err := slimcuda.Pack(manifest, *out); err != nil {
		return err
	}
	st, err := os.Stat(*out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (%d bytes)\n", *out, st.Size())
	return nil
}
