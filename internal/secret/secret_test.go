package secret

import (
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func newBox(t *testing.T) *Box {
	t.Helper()
	k, err := ParseKey(NewKey())
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(k)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSealOpenRoundTrip(t *testing.T) {
	b := newBox(t)
	for _, pt := range []string{"", "sk-abc", strings.Repeat("κλειδί", 100)} {
		sealed := b.Seal(pt)
		if pt != "" && strings.Contains(sealed, pt) {
			t.Fatalf("sealed value contains the plaintext")
		}
		got, err := b.Open(sealed)
		if err != nil || got != pt {
			t.Fatalf("Open(Seal(%q)) = %q, %v", pt, got, err)
		}
	}
	if first, second := b.Seal("x"), b.Seal("x"); first == second {
		t.Fatal("two seals of the same value are identical: nonce reused")
	}
}

func TestOpenWithWrongKeyIsAClearError(t *testing.T) {
	sealed := newBox(t).Seal("sk-live-123")
	_, err := newBox(t).Open(sealed)
	if !errors.Is(err, ErrWrongKey) {
		t.Fatalf("err = %v, want ErrWrongKey", err)
	}
}

func TestOpenTamperedOrMalformed(t *testing.T) {
	b := newBox(t)
	sealed := b.Seal("hello")
	// Alter one byte of the ciphertext, not of its base64 text, so the
	// result is still well-formed and must fail authentication.
	raw, err := base64.RawStdEncoding.DecodeString(strings.TrimPrefix(sealed, "v1:"))
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)-1] ^= 1
	flipped := "v1:" + base64.RawStdEncoding.EncodeToString(raw)
	cases := map[string]error{
		flipped:                 ErrWrongKey,
		sealed[:len(sealed)-4]:  ErrWrongKey,
		"plaintext":             ErrMalformed,
		"v1:!!!":                ErrMalformed,
		"v1:AAAA":               ErrMalformed,
		sealed[:len(sealed)-30]: ErrMalformed,
	}
	for in, want := range cases {
		if _, err := b.Open(in); !errors.Is(err, want) {
			t.Errorf("Open(%q) err = %v, want %v", in, err, want)
		}
	}
}

func TestMask(t *testing.T) {
	for in, want := range map[string]string{
		"":                    "",
		"short":               "••••••••",
		"sk-0123456789abcdef": "••••••••cdef",
	} {
		if got := Mask(in); got != want {
			t.Errorf("Mask(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseKeyRejectsBadKeys(t *testing.T) {
	for _, in := range []string{"not base64 !!", "c2hvcnQ=", ""} {
		if _, err := ParseKey(in); err == nil {
			t.Errorf("ParseKey(%q) accepted", in)
		}
	}
}

func TestLoadOrCreateWritesOnceWith0600(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", "secret.key")
	k1, created, err := LoadOrCreate("", path)
	if err != nil || !created {
		t.Fatalf("first load: created=%v err=%v", created, err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Fatalf("mode = %v, want 0600", info.Mode().Perm())
	}
	k2, created, err := LoadOrCreate("", path)
	if err != nil || created || string(k1) != string(k2) {
		t.Fatalf("second load: created=%v err=%v same=%v", created, err, string(k1) == string(k2))
	}
}

func TestLoadOrCreatePrefersConfigured(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secret.key")
	key := NewKey()
	k, created, err := LoadOrCreate(key, path)
	if err != nil || created {
		t.Fatalf("created=%v err=%v", created, err)
	}
	want, _ := ParseKey(key)
	if string(k) != string(want) {
		t.Fatal("configured key not used")
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("a key file was written although a key was configured")
	}
	if _, _, err := LoadOrCreate("bad", path); err == nil || !strings.Contains(err.Error(), "LEMBAS_SECRET_KEY") {
		t.Fatalf("bad configured key: err = %v, want one naming LEMBAS_SECRET_KEY", err)
	}
}
