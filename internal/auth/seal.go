package auth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
)

// Sealing: AES-256-GCM under a key derived with HKDF-SHA256 from a secret
// and a purpose label, so one secret never keys two uses (a client's
// secret seals its mon session key and, separately, keys its proof).
// A sealed box is nonce (12 random bytes) || ciphertext || tag (16).
// Callers bind context (names, nonces, headers) as additional data.

// Purposes: the HKDF info labels. Changing one breaks compatibility.
const (
	purposeClientProof  = "client proof"     // HMAC key of the client's proof to the mon
	purposeMonSession   = "mon session"      // seals the mon session key under the client's secret
	purposeTicketGrant  = "ticket grant"     // seals service tickets for the client
	purposeTicket       = "ticket"           // seals a ticket under a rotating service key
	purposeAuthorizer   = "authorizer"       // seals the client's authorizer proof
	purposeAuthReply    = "authorizer reply" // seals the service's reply
	purposeConnection   = "connection"       // derives a connection's session key
	purposeRotatingKeys = "rotating keys"    // seals rotating keys sent to a daemon
)

const (
	gcmNonceSize = 12
	gcmTagSize   = 16
	sealOverhead = gcmNonceSize + gcmTagSize
)

var errOpen = errors.New("auth: sealed box does not open")

// deriveKey returns a 32-byte key for purpose from secret and salt.
func deriveKey(secret, salt []byte, purpose string) []byte {
	k, err := hkdf.Key(sha256.New, secret, salt, "cuttle auth v1 "+purpose, 32)
	if err != nil { // only for lengths over 255*32
		panic("auth: hkdf: " + err.Error())
	}
	return k
}

func newAEAD(secret []byte, purpose string) cipher.AEAD {
	block, err := aes.NewCipher(deriveKey(secret, nil, purpose))
	if err != nil { // a 32-byte key always works
		panic("auth: aes: " + err.Error())
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic("auth: gcm: " + err.Error())
	}
	return aead
}

// seal encrypts and authenticates plaintext, binding ad.
func seal(secret []byte, purpose string, plaintext, ad []byte) []byte {
	aead := newAEAD(secret, purpose)
	nonce := make([]byte, gcmNonceSize, gcmNonceSize+len(plaintext)+gcmTagSize)
	rand.Read(nonce) // never fails (crypto/rand docs)
	return aead.Seal(nonce, nonce, plaintext, ad)
}

// open reverses seal; any tampering, wrong key, purpose or ad is errOpen.
func open(secret []byte, purpose string, box, ad []byte) ([]byte, error) {
	if len(box) < sealOverhead {
		return nil, errOpen
	}
	pt, err := newAEAD(secret, purpose).Open(nil, box[:gcmNonceSize], box[gcmNonceSize:], ad)
	if err != nil {
		return nil, errOpen
	}
	return pt, nil
}
