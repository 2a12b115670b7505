package s3cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/internal/config"
)

// The gateway's options are the schema's options read by "s3"
// (internal/config/schema.go; docs/CONFIG.md): each from serve's flag,
// else the configuration file (--conf) in its [client.s3], [client] or
// [global] section, else its default.

// addOptionFlags adds a flag for each gateway option named with prefix
// that names one.
func addOptionFlags(fl *pflag.FlagSet, given map[string]string, prefix string) {
	for _, o := range config.ForDaemon("s3") {
		if o.Flag != "" && strings.HasPrefix(o.Name, prefix) {
			cmdutil.AddOptionFlag(fl, o, given)
		}
	}
}

// gatewayEntity is the gateway's name in the configuration file.
const gatewayEntity = "client.s3"

// gatewayOptions resolves the gateway's options from the flags given
// and the configuration file --conf names, if it can be read (a missing
// default file is no error: the cluster may be named by --mon-host).
func gatewayOptions(cmd *cobra.Command, given map[string]string) (config.Values, error) {
	var names []string
	for _, o := range config.ForDaemon("s3") {
		names = append(names, o.Name)
	}
	var file *config.File
	if f := cmd.Flag("conf"); f != nil && f.Value.String() != "" {
		c, err := config.Load(f.Value.String())
		switch {
		case err == nil:
			file = c
		case errors.Is(err, fs.ErrNotExist) && !f.Changed:
		default:
			return config.Values{}, fmt.Errorf("s3: --conf %s: %w", f.Value.String(), err)
		}
	}
	v, err := config.Resolve(names, config.FileLayer(file, gatewayEntity, names),
		config.Layer{Source: config.SourceFlag, Values: maps.Clone(given)})
	if err != nil {
		return v, fmt.Errorf("s3: %w (EINVAL)", err)
	}
	return v, nil
}
