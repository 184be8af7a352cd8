package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"lembas/internal/secret"
)

func runCLI(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(args, strings.NewReader(stdin), &out, &errOut)
	return out.String() + errOut.String(), err
}

func TestSecretKeyPrintsAUsableKey(t *testing.T) {
	out, err := runCLI(t, "", "secret-key")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := secret.ParseKey(strings.TrimSpace(out)); err != nil {
		t.Fatalf("printed key %q does not parse: %v", out, err)
	}
}

func TestVersionAndUnknownCommand(t *testing.T) {
	if out, err := runCLI(t, "", "version"); err != nil || !strings.HasPrefix(out, "lembas ") {
		t.Fatalf("version: %q %v", out, err)
	}
	if _, err := runCLI(t, "", "conquer"); err == nil || !strings.Contains(err.Error(), "lembas help") {
		t.Fatalf("unknown command: %v", err)
	}
}

func TestCreateAdminThenInfo(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("LEMBAS_DATA_DIR", dir)
	out, err := runCLI(t, "", "info")
	if err != nil || !strings.Contains(out, "no database yet") {
		t.Fatalf("info on a fresh dir: %q %v", out, err)
	}
	if _, err := runCLI(t, "short\n", "create-admin", "--password-stdin", "gandalf"); err == nil || !strings.Contains(err.Error(), "at least 8") {
		t.Fatalf("short password: %v", err)
	}
	out, err = runCLI(t, "you shall not pass\n", "create-admin", "--password-stdin", "gandalf")
	if err != nil || !strings.Contains(out, "Created administrator gandalf") {
		t.Fatalf("create: %q %v", out, err)
	}
	out, err = runCLI(t, "\n", "create-admin", "--password-stdin", "gandalf")
	if err != nil || !strings.Contains(out, "now an administrator") {
		t.Fatalf("promote: %q %v", out, err)
	}
	out, err = runCLI(t, "", "info")
	if err != nil || !strings.Contains(out, "users        1") || !strings.Contains(out, filepath.Join(dir, "lembas.db")) {
		t.Fatalf("info: %q %v", out, err)
	}
}
