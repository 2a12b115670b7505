package s3cmd

import (
	"crypto/tls"
	"fmt"

	"github.com/cuttlestore/cuttle/internal/s3gw"
)

// serverTLS is the TLS configuration of a gateway given a certificate
// (chain) and its key, PEM files (nil when neither is given: HTTP).
func serverTLS(certFile, keyFile string) (*tls.Config, error) {
	if certFile == "" && keyFile == "" {
		return nil, nil
	}
	if certFile == "" || keyFile == "" {
		return nil, &cliError{msg: "s3 serve: give both --cert and --key (s3_ssl_certificate and s3_ssl_private_key) for HTTPS, or neither (EINVAL)"}
	}
	cfg, err := s3gw.ServerTLS(certFile, keyFile)
	if err != nil {
		return nil, &cliError{msg: fmt.Sprintf("s3 serve: %v (EINVAL); give --cert a PEM certificate and --key its PEM private key", err), err: err}
	}
	return cfg, nil
}
