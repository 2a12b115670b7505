package configmon

import "github.com/cuttlestore/cuttle/internal/config"

// Schema returns the options the service accepts, by name: every option
// of the one schema in internal/config, whichever daemon reads it.
func Schema() []config.Option { return config.Schema() }

// Lookup returns the option called name.
func Lookup(name string) (config.Option, bool) { return config.Lookup(name) }
