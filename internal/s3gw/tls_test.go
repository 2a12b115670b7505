package s3gw

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// selfSigned writes a self-signed certificate for 127.0.0.1 and
// localhost, and its key, as PEM files in dir.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "cuttle s3 test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// HTTPS (cuttle s3 serve --cert --key): the gateway serves TLS with a
// certificate and key from PEM files; the aws command line trusting the
// certificate (--ca-bundle) makes a bucket, puts, lists and gets back
// over it; plain HTTP to the port is refused, and so is a client that
// does not trust the certificate. Files that are missing or do not
// match are errors.
func TestTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := selfSigned(t, dir)
	if _, err := ServerTLS(filepath.Join(dir, "none.pem"), keyFile); err == nil {
		t.Fatal("a missing certificate loaded")
	}
	_, otherKey := selfSigned(t, t.TempDir())
	if _, err := ServerTLS(certFile, otherKey); err == nil {
		t.Fatal("a certificate with another's key loaded")
	}
	cfg, err := ServerTLS(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	url, access, secret := tcpGatewayTLS(t, cfg)
	if !strings.HasPrefix(url, "https://") {
		t.Fatalf("url %s", url)
	}
	// Go's client: trusted, it gets an answer; untrusted, no connection.
	pool := x509.NewCertPool()
	caPEM, err := os.ReadFile(certFile)
	if err != nil || !pool.AppendCertsFromPEM(caPEM) {
		t.Fatalf("the certificate: %v", err)
	}
	trusting := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := trusting.Get(url + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.TLS == nil || resp.TLS.Version < tls.VersionTLS12 {
		t.Fatalf("anonymous ListBuckets over TLS: %d %+v", resp.StatusCode, resp.TLS)
	}
	if _, err := (&http.Client{}).Get(url + "/"); err == nil {
		t.Fatal("a client that does not trust the certificate connected")
	}
	if resp, err := http.Get("http://" + strings.TrimPrefix(url, "https://") + "/"); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("plain HTTP to the TLS port: %d %s", resp.StatusCode, b)
		}
	}

	needTool(t, "aws")
	work := t.TempDir()
	aws := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("aws", append([]string{"--endpoint-url", url, "--ca-bundle", certFile}, args...)...)
		cmd.Env = clientEnv(access, secret)
		cmd.Dir = work
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("aws %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	if err := os.WriteFile(filepath.Join(work, "f"), []byte("over TLS"), 0o644); err != nil {
		t.Fatal(err)
	}
	aws("s3", "mb", "s3://tls-bucket")
	aws("s3", "cp", "f", "s3://tls-bucket/f")
	if got := aws("s3", "cp", "s3://tls-bucket/f", "-"); got != "over TLS" {
		t.Fatalf("read back over TLS: %q", got)
	}
}
