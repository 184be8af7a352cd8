// Package secret seals values at rest (API keys, tokens) with AES-256-GCM
// under the instance's secret key, and masks them for display. It owns the
// key file in the data directory. It never logs a value and never returns
// plaintext it could not authenticate.
package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// KeySize is the length of the raw key: AES-256.
const KeySize = 32

// sealedPrefix marks a sealed value and its format version, so a future
// change of algorithm can tell old values from new ones.
const sealedPrefix = "v1:"

var (
	// ErrWrongKey means a sealed value did not authenticate: it was sealed
	// under another key, or it was altered.
	ErrWrongKey = errors.New("secret: the value was sealed under a different secret key, or has been altered")
	// ErrMalformed means the text is not a sealed value at all.
	ErrMalformed = errors.New("secret: not a sealed value")
)

// Box seals and opens values under one key.
type Box struct {
	aead cipher.AEAD
}

// NewKey returns a fresh random key, base64-encoded (the form
// LEMBAS_SECRET_KEY and secret.key hold).
func NewKey() string {
	k := make([]byte, KeySize)
	if _, err := rand.Read(k); err != nil {
		panic("secret: no randomness: " + err.Error()) // crypto/rand never fails on supported systems
	}
	return base64.StdEncoding.EncodeToString(k)
}

// ParseKey decodes a base64 key and checks its length.
func ParseKey(encoded string) ([]byte, error) {
	encoded = strings.TrimSpace(encoded)
	k, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		k, err = base64.RawURLEncoding.DecodeString(strings.TrimRight(encoded, "="))
	}
	if err != nil {
		return nil, errors.New("the secret key is not valid base64; generate one with `lembas secret-key`")
	}
	if len(k) != KeySize {
		return nil, fmt.Errorf("the secret key must be %d bytes (base64 of %d random bytes), not %d; generate one with `lembas secret-key`", KeySize, KeySize, len(k))
	}
	return k, nil
}

// New makes a Box from a raw key.
func New(key []byte) (*Box, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("secret: key must be %d bytes, got %d", KeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secret: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secret: %w", err)
	}
	return &Box{aead: aead}, nil
}

// Seal encrypts plaintext. The empty string seals to the empty string, so
// "no key set" needs no special case in storage.
func (b *Box) Seal(plaintext string) string {
	if plaintext == "" {
		return ""
	}
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic("secret: no randomness: " + err.Error())
	}
	out := b.aead.Seal(nonce, nonce, []byte(plaintext), nil)
	return sealedPrefix + base64.RawStdEncoding.EncodeToString(out)
}

// Open decrypts a value made by Seal. It returns ErrWrongKey when the value
// does not authenticate and ErrMalformed when it is not a sealed value.
func (b *Box) Open(sealed string) (string, error) {
	if sealed == "" {
		return "", nil
	}
	rest, ok := strings.CutPrefix(sealed, sealedPrefix)
	if !ok {
		return "", ErrMalformed
	}
	raw, err := base64.RawStdEncoding.DecodeString(rest)
	if err != nil || len(raw) < b.aead.NonceSize()+b.aead.Overhead() {
		return "", ErrMalformed
	}
	nonce, ct := raw[:b.aead.NonceSize()], raw[b.aead.NonceSize():]
	pt, err := b.aead.Open(nil, nonce, ct, nil)
	if err != nil {
		return "", ErrWrongKey
	}
	return string(pt), nil
}

// Mask shows enough of a secret for a person to recognise it and no more:
// the last four characters of a long value, nothing of a short one.
func Mask(plaintext string) string {
	switch n := len([]rune(plaintext)); {
	case n == 0:
		return ""
	case n < 12:
		return "••••••••"
	default:
		r := []rune(plaintext)
		return "••••••••" + string(r[n-4:])
	}
}

// LoadOrCreate returns the key to use: the configured one when given,
// otherwise the one in path, creating that file (mode 0600) on first use.
// created reports whether a new key file was written, so the caller can
// announce it once.
func LoadOrCreate(configured, path string) (key []byte, created bool, err error) {
	if strings.TrimSpace(configured) != "" {
		k, err := ParseKey(configured)
		if err != nil {
			return nil, false, fmt.Errorf("LEMBAS_SECRET_KEY: %w", err)
		}
		return k, false, nil
	}
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		k, err := ParseKey(string(data))
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", path, err)
		}
		return k, false, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, false, fmt.Errorf("read secret key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, false, fmt.Errorf("create data directory: %w", err)
	}
	encoded := NewKey()
	// O_EXCL: two processes starting at once must not each write a key and
	// leave one of them sealing under a key nobody kept.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return LoadOrCreate("", path)
	}
	if err != nil {
		return nil, false, fmt.Errorf("write secret key: %w", err)
	}
	if _, err := f.WriteString(encoded + "\n"); err != nil {
		f.Close()
		return nil, false, fmt.Errorf("write secret key: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, false, fmt.Errorf("write secret key: %w", err)
	}
	k, _ := ParseKey(encoded)
	return k, true, nil
}
