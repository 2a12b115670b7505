package nbdcmd

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"

	"github.com/spf13/pflag"

	"github.com/cuttlestore/cuttle/internal/nbd"
)

// The --tls modes of serve.
const (
	tlsRequire  = "require"
	tlsOptional = "optional"
	tlsOff      = "off"
)

// serveTLS is serve's TLS flags.
type serveTLS struct{ mode, cert, key, ca string }

func (s *serveTLS) addFlags(f *pflag.FlagSet) {
	f.StringVar(&s.cert, "tls-cert", "", "the server's TLS certificate (PEM, the chain after it); clients upgrade with NBD_OPT_STARTTLS")
	f.StringVar(&s.key, "tls-key", "", "the key of --tls-cert (PEM)")
	f.StringVar(&s.ca, "tls-ca", "", "require client certificates signed by these CA certificates (PEM)")
	f.StringVar(&s.mode, "tls", "", "require: every client must use TLS; optional: clients choose; off (default require with --tls-cert, else off)")
}

// config is the server's TLS configuration (nil when off), whether it is
// optional, and the mode for the startup line.
func (s *serveTLS) config() (*tls.Config, bool, string, error) {
	mode := s.mode
	if mode == "" {
		mode = tlsOff
		if s.cert != "" || s.key != "" || s.ca != "" {
			mode = tlsRequire
		}
	}
	switch mode {
	case tlsOff:
		if s.cert != "" || s.key != "" || s.ca != "" {
			return nil, false, "", errors.New("--tls off with --tls-cert, --tls-key or --tls-ca: drop one or the other (EINVAL)")
		}
		return nil, false, mode, nil
	case tlsRequire, tlsOptional:
		if s.cert == "" || s.key == "" {
			return nil, false, "", fmt.Errorf("--tls %s needs --tls-cert FILE and --tls-key FILE (docs/NBD.md shows how to make them with openssl) (EINVAL)", mode)
		}
		cfg, err := nbd.ServerTLS(s.cert, s.key, s.ca)
		if err != nil {
			return nil, false, "", err
		}
		return cfg, mode == tlsOptional, mode, nil
	}
	return nil, false, "", fmt.Errorf("--tls %q: want require, optional or off (EINVAL)", s.mode)
}

// clientTLS is ls's TLS flags.
type clientTLS struct {
	on                      bool
	ca, cert, key, hostname string
}

func (c *clientTLS) addFlags(f *pflag.FlagSet) {
	f.BoolVar(&c.on, "tls", false, "upgrade the connection with NBD_OPT_STARTTLS (implied by the other --tls flags); never falls back to plain text")
	f.StringVar(&c.ca, "tls-ca", "", "CA certificates (PEM) that signed the server's certificate (default the system's)")
	f.StringVar(&c.cert, "tls-cert", "", "a client certificate (PEM) for a server that asks for one")
	f.StringVar(&c.key, "tls-key", "", "the key of --tls-cert (PEM)")
	f.StringVar(&c.hostname, "tls-hostname", "", "the name the server's certificate must have (default the host of --connect; localhost for a Unix socket)")
}

// config is the client's TLS configuration for a, or nil without TLS.
func (c *clientTLS) config(a listenAddr) (*tls.Config, error) {
	if !c.on && c.ca == "" && c.cert == "" && c.key == "" && c.hostname == "" {
		return nil, nil
	}
	name := c.hostname
	if name == "" {
		name = "localhost"
		if a.network == "tcp" {
			if h, _, err := net.SplitHostPort(a.addr); err == nil {
				name = h
			}
		}
	}
	return nbd.ClientTLS(c.ca, c.cert, c.key, name)
}

// tlsFailure says what to do about a TLS failure of ls, or returns nil
// when err is not one.
func tlsFailure(a listenAddr, err error) error {
	var unknown x509.UnknownAuthorityError
	var hostname x509.HostnameError
	switch {
	case errors.Is(err, nbd.ErrTLSRequired):
		return fmt.Errorf("%s: %w; add --tls (and --tls-ca FILE, the CA of its certificate) (EACCES)", a, err)
	case errors.Is(err, nbd.ErrNoTLS):
		return fmt.Errorf("%s: %w; drop --tls to list it in plain text (EPROTO)", a, err)
	case errors.As(err, &unknown):
		return fmt.Errorf("%s: %w; --tls-ca FILE names the CA that signed the server's certificate (EACCES)", a, err)
	case errors.As(err, &hostname):
		return fmt.Errorf("%s: %w; --tls-hostname NAME names the server as its certificate does (EACCES)", a, err)
	}
	// A TLS alert from the server (crypto/tls's type for it is
	// unexported).
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "remote error" {
		return fmt.Errorf("%s: %w; the server refused the TLS connection: does it want a client certificate (--tls-cert, --tls-key)? (EACCES)", a, err)
	}
	return nil
}

// tlsNote is what the startup line says of TLS.
func tlsNote(st startup) string {
	switch st.TLS {
	case tlsRequire:
		if st.ClientCerts {
			return " (TLS required, with client certificates)"
		}
		return " (TLS required)"
	case tlsOptional:
		if st.ClientCerts {
			return " (TLS optional; client certificates required with it)"
		}
		return " (TLS optional)"
	}
	return ""
}
