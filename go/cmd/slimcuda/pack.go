// SPDX-License-Identifier: Apache-2.0

package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/slimcuda/slimcuda/go/slimcuda"
)

var packCommand = command{
	usageLine: "pack [-o OUT] MANIFEST",
	doc: "Writes a model package from a JSON manifest naming the model libraries (one per device type) and\n" +
		"their inputs and outputs (format: csrc/package/manifest.h). The package is checked as a reader would.",
	define: func(fs *flag.FlagSet) func(c *cmdContext) error {
		out := fs.String("o", "", "output file (default: MANIFEST with the extension .slimcuda)")
		return func(c *cmdContext) error {
			if err := c.args(1, 1, "MANIFEST"); err != nil {
				return err
			}
			manifest := userPath(c.fs.Arg(0))
			dst := userPath(*out)
			if dst == "" {
				dst = strings.TrimSuffix(manifest, ".json") + ".slimcuda"
			}
			if err := slimcuda.Pack(manifest, dst); err != nil {
				return err
			}
			st, err := os.Stat(dst)
			if err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "wrote %s (%d bytes)\n", dst, st.Size())
			return nil
		}
	},
}
