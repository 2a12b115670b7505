package nbd

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ServerTLS builds a server's TLS configuration (Config.TLS) from PEM
// files: its certificate (chain) and key and, when caFile is set, the CA
// certificates that must have signed a client's certificate; a client
// without one is refused. TLS 1.2 is the oldest version accepted, as
// proto.md asks.
func ServerTLS(certFile, keyFile, caFile string) (*tls.Config, error) {
	if certFile == "" || keyFile == "" {
		return nil, errors.New("nbd: TLS needs a certificate and its key (EINVAL)")
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fileError("certificate "+certFile+" and key "+keyFile, err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pool, err := loadCAs(caFile)
		if err != nil {
			return nil, err
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// ClientTLS builds a client's TLS configuration: the server's certificate
// must be signed by a CA of caFile (the system's CAs if empty) for
// serverName; certFile and keyFile, both or neither, are the client's
// certificate for a server that asks for one.
func ClientTLS(caFile, certFile, keyFile, serverName string) (*tls.Config, error) {
	cfg := &tls.Config{ServerName: serverName, MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pool, err := loadCAs(caFile)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	if (certFile == "") != (keyFile == "") {
		return nil, errors.New("nbd: a client certificate needs its key, and a key its certificate (EINVAL)")
	}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fileError("certificate "+certFile+" and key "+keyFile, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

func loadCAs(file string) (*x509.CertPool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fileError("CA certificates "+file, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("nbd: CA certificates %s: no PEM certificate in it (EINVAL)", file)
	}
	return pool, nil
}

// fileError names the errno of a failure to load a PEM file.
func fileError(what string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("nbd: %s: %w (ENOENT)", what, err)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("nbd: %s: %w (EACCES)", what, err)
	}
	return fmt.Errorf("nbd: %s: %w (EINVAL)", what, err)
}
