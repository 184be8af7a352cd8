package static

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// lockPath is scripts/vendor.lock.json, written by scripts/vendor.sh --update.
const lockPath = "../../../scripts/vendor.lock.json"

// vendorLock is the part of scripts/vendor.lock.json that the test checks.
type vendorLock struct {
	Packages []struct {
		Name    string `json:"name"`
		Version string `json:"version"`
		// Files maps a path relative to the vendor folder to its sha256 (hex).
		Files map[string]string `json:"files"`
	} `json:"packages"`
}

// checkVendored compares every file under vendorDir with the lock and returns
// one error naming each mismatched, missing or unlisted file, or nil when the
// folder holds exactly the locked files with the locked contents.
func checkVendored(lockJSON []byte, vendorDir string) error {
	var lock vendorLock
	if err := json.Unmarshal(lockJSON, &lock); err != nil {
		return fmt.Errorf("reading the lock: %w", err)
	}
	if len(lock.Packages) == 0 {
		return errors.New("the lock lists no packages")
	}

	var errs []error
	want := map[string]string{}
	for _, p := range lock.Packages {
		id := p.Name + "@" + p.Version
		if len(p.Files) == 0 {
			errs = append(errs, fmt.Errorf("%s: the lock lists no files", id))
		}
		hasLicence := false
		for name, sum := range p.Files {
			if !fs.ValidPath(name) || name == "." {
				errs = append(errs, fmt.Errorf("%s: bad path %q in the lock", id, name))
				continue
			}
			if _, dup := want[name]; dup {
				errs = append(errs, fmt.Errorf("%s: listed twice in the lock", name))
			}
			want[name] = sum
			base := strings.ToUpper(path.Base(name))
			if strings.HasPrefix(base, "LICENSE") || strings.HasPrefix(base, "LICENCE") || strings.HasPrefix(base, "COPYING") {
				hasLicence = true
			}
		}
		if !hasLicence {
			errs = append(errs, fmt.Errorf("%s: no licence file is vendored", id))
		}
	}

	seen := map[string]bool{}
	err := filepath.WalkDir(vendorDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(vendorDir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if !d.Type().IsRegular() {
			errs = append(errs, fmt.Errorf("%s: not a regular file", rel))
			return nil
		}
		sum, listed := want[rel]
		if !listed {
			errs = append(errs, fmt.Errorf("%s: not listed in the lock", rel))
			return nil
		}
		seen[rel] = true
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		h := sha256.Sum256(data)
		if got := hex.EncodeToString(h[:]); got != sum {
			errs = append(errs, fmt.Errorf("%s: sha256 mismatch: lock has %s, file has %s", rel, sum, got))
		}
		return nil
	})
	if err != nil {
		errs = append(errs, fmt.Errorf("walking %s: %w", vendorDir, err))
	}

	var missing []string
	for name := range want {
		if !seen[name] {
			missing = append(missing, name)
		}
	}
	slices.Sort(missing)
	for _, name := range missing {
		errs = append(errs, fmt.Errorf("%s: missing", name))
	}
	return errors.Join(errs...)
}

func readLock(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatalf("reading %s: %v", lockPath, err)
	}
	return data
}

// TestVendoredFilesMatchLock is the CI check behind scripts/vendor.sh: the
// committed vendor folder must hold exactly the locked files.
func TestVendoredFilesMatchLock(t *testing.T) {
	if err := checkVendored(readLock(t), "vendor"); err != nil {
		t.Fatalf("vendored files do not match %s (run scripts/vendor.sh to see why, --fetch to restore):\n%v", lockPath, err)
	}
}

// TestCheckVendoredFails proves the checker can fail: each case alters a copy
// of the vendor folder or the lock and expects an error naming the problem.
func TestCheckVendoredFails(t *testing.T) {
	lock := readLock(t)
	var parsed vendorLock
	if err := json.Unmarshal(lock, &parsed); err != nil {
		t.Fatal(err)
	}
	var some string // one locked file, chosen deterministically
	for _, p := range parsed.Packages {
		for name := range p.Files {
			if some == "" || name < some {
				some = name
			}
		}
	}
	if some == "" {
		t.Fatal("the lock lists no files")
	}

	tests := []struct {
		name   string
		alter  func(t *testing.T, dir string) []byte // returns the lock to use
		wantIn []string                              // substrings of the error; none means no error
	}{
		{
			name:  "unaltered copy passes",
			alter: func(*testing.T, string) []byte { return lock },
		},
		{
			name: "one altered byte",
			alter: func(t *testing.T, dir string) []byte {
				p := filepath.Join(dir, filepath.FromSlash(some))
				data, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				data[len(data)/2] ^= 0x01
				if err := os.WriteFile(p, data, 0o644); err != nil {
					t.Fatal(err)
				}
				return lock
			},
			wantIn: []string{some, "sha256 mismatch"},
		},
		{
			name: "missing file",
			alter: func(t *testing.T, dir string) []byte {
				if err := os.Remove(filepath.Join(dir, filepath.FromSlash(some))); err != nil {
					t.Fatal(err)
				}
				return lock
			},
			wantIn: []string{some, "missing"},
		},
		{
			name: "unlisted file",
			alter: func(t *testing.T, dir string) []byte {
				if err := os.MkdirAll(filepath.Join(dir, "extra"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "extra", "x.js"), []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
				return lock
			},
			wantIn: []string{"extra/x.js", "not listed"},
		},
		{
			name: "unlisted hidden file",
			alter: func(t *testing.T, dir string) []byte {
				if err := os.WriteFile(filepath.Join(dir, ".keep"), nil, 0o644); err != nil {
					t.Fatal(err)
				}
				return lock
			},
			wantIn: []string{".keep", "not listed"},
		},
		{
			name: "licence dropped",
			alter: func(t *testing.T, dir string) []byte {
				var l vendorLock
				if err := json.Unmarshal(lock, &l); err != nil {
					t.Fatal(err)
				}
				for _, p := range l.Packages {
					for name := range p.Files {
						if strings.HasPrefix(strings.ToUpper(path.Base(name)), "LICEN") {
							delete(p.Files, name)
							if err := os.Remove(filepath.Join(dir, filepath.FromSlash(name))); err != nil {
								t.Fatal(err)
							}
						}
					}
				}
				out, err := json.Marshal(l)
				if err != nil {
					t.Fatal(err)
				}
				return out
			},
			wantIn: []string{"no licence file"},
		},
		{
			name:   "empty lock",
			alter:  func(*testing.T, string) []byte { return []byte(`{"packages": []}`) },
			wantIn: []string{"no packages"},
		},
		{
			name:   "broken lock",
			alter:  func(*testing.T, string) []byte { return []byte(`{"packages": [`) },
			wantIn: []string{"reading the lock"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.CopyFS(dir, os.DirFS("vendor")); err != nil {
				t.Fatal(err)
			}
			err := checkVendored(tt.alter(t, dir), dir)
			if len(tt.wantIn) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error; want one containing %q", tt.wantIn)
			}
			for _, s := range tt.wantIn {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
		})
	}
}
