package main

import (
	"io"

	"github.com/nsrnn/nsrnn/experiments/internal/cli"
)

func init() {
	prog.Register("devices", cli.DevicesSummary, func(args []string, stdout, _ io.Writer) error {
		return cli.RunDevices(prog, args, stdout)
	})
}
