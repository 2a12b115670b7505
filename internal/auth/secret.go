package auth

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"log/slog"
)

// SecretSize is the size of every secret key in bytes.
const SecretSize = 32

// Secret is a 32-byte secret key: an entity's key, or a rotating service
// key. Its String and LogValue redact it, so a stray %v or slog attribute
// does not leak it; Base64 is the only way to its text form.
type Secret [SecretSize]byte

// NewSecret returns a fresh random secret from crypto/rand.
func NewSecret() Secret {
	var s Secret
	rand.Read(s[:]) // never fails (crypto/rand docs)
	return s
}

// ParseSecret parses the base64 text form (standard alphabet, padded).
func ParseSecret(text string) (Secret, error) {
	var s Secret
	b, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		return s, fmt.Errorf("auth: secret is not base64: %w", err)
	}
	if len(b) != SecretSize {
		return s, fmt.Errorf("auth: secret is %d bytes, want %d", len(b), SecretSize)
	}
	copy(s[:], b)
	return s, nil
}

// Base64 returns the text form used in keyrings.
func (s Secret) Base64() string { return base64.StdEncoding.EncodeToString(s[:]) }

// IsZero reports whether s is all zeros (unset).
func (s Secret) IsZero() bool { return s == Secret{} }

// String redacts the secret.
func (s Secret) String() string { return "auth.Secret(redacted)" }

// GoString redacts the secret from %#v too.
func (s Secret) GoString() string { return s.String() }

// LogValue redacts the secret from slog output.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }
