package s3cmd

import "github.com/cuttlestore/cuttle/kv"

// kvConfig is how the CLI's gateways use bucket indexes.
func kvConfig() kv.Config { return kv.Config{} }
