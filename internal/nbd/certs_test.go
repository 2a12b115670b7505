package nbd

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestCerts is a CA made for one test and the server and client
// certificates it signed, also written as PEM files to Dir under the
// names qemu's tls-creds-x509 and libnbd's tls-certificates=DIR look for
// (ca-cert.pem, client-cert.pem, client-key.pem; server-cert.pem and
// server-key.pem for a server). The server's is for localhost, 127.0.0.1
// and ::1.
type TestCerts struct {
	Dir    string
	CAs    *x509.CertPool
	Server tls.Certificate
	Client tls.Certificate
}

// MakeCerts makes a CA and its certificates in dir.
func MakeCerts(t testing.TB, dir string) *TestCerts {
	t.Helper()
	now := time.Now()
	caKey := newKey(t)
	ca := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "cuttle test CA " + filepath.Base(dir)},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	if ca, err = x509.ParseCertificate(caDER); err != nil {
		t.Fatal(err)
	}
	out := &TestCerts{Dir: dir, CAs: x509.NewCertPool()}
	out.CAs.AddCert(ca)
	writePEM(t, filepath.Join(dir, "ca-cert.pem"), "CERTIFICATE", caDER)
	leaf := func(serial int64, name string, usage x509.ExtKeyUsage) tls.Certificate {
		key := newKey(t)
		tmpl := &x509.Certificate{
			SerialNumber:          big.NewInt(serial),
			Subject:               pkix.Name{CommonName: name},
			NotBefore:             now.Add(-time.Hour),
			NotAfter:              now.Add(24 * time.Hour),
			KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
			ExtKeyUsage:           []x509.ExtKeyUsage{usage},
			BasicConstraintsValid: true,
		}
		if usage == x509.ExtKeyUsageServerAuth {
			tmpl.DNSNames = []string{"localhost"}
			tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kb, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		role := "client"
		if usage == x509.ExtKeyUsageServerAuth {
			role = "server"
		}
		writePEM(t, filepath.Join(dir, role+"-cert.pem"), "CERTIFICATE", der)
		writePEM(t, filepath.Join(dir, role+"-key.pem"), "PRIVATE KEY", kb)
		return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	}
	out.Server = leaf(2, "localhost", x509.ExtKeyUsageServerAuth)
	out.Client = leaf(3, "cuttle-test-client", x509.ExtKeyUsageClientAuth)
	return out
}

// ServerConfig is a server's TLS configuration; with clientCerts it
// requires a client certificate this CA signed.
func (c *TestCerts) ServerConfig(clientCerts bool) *tls.Config {
	cfg := &tls.Config{Certificates: []tls.Certificate{c.Server}, MinVersion: tls.VersionTLS12}
	if clientCerts {
		cfg.ClientCAs, cfg.ClientAuth = c.CAs, tls.RequireAndVerifyClientCert
	}
	return cfg
}

// ClientConfig trusts this CA for localhost and, with cert, presents
// the client certificate.
func (c *TestCerts) ClientConfig(cert bool) *tls.Config {
	cfg := &tls.Config{RootCAs: c.CAs, ServerName: "localhost", MinVersion: tls.VersionTLS12}
	if cert {
		cfg.Certificates = []tls.Certificate{c.Client}
	}
	return cfg
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func writePEM(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
