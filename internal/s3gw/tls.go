package s3gw

import (
	"crypto/tls"
	"fmt"
)

// ServerTLS is the TLS configuration of a gateway serving HTTPS with the
// certificate (chain) and private key of two PEM files: TLS 1.2 and
// later, Go's default cipher suites.
func ServerTLS(certFile, keyFile string) (*tls.Config, error) {
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("s3gw: certificate %s, key %s: %w", certFile, keyFile, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, nil
}
