package catalog

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestNormalizeBaseURL(t *testing.T) {
	for _, tc := range []struct {
		in, want string // want "" means refused
	}{
		{"http://localhost:11434/v1", "http://localhost:11434/v1"},
		{"  http://localhost:11434/v1/  ", "http://localhost:11434/v1"},
		{"http://localhost:11434/v1///", "http://localhost:11434/v1"},
		{"https://api.example.com/v1/models", "https://api.example.com/v1"},
		{"https://api.example.com/v1/models/", "https://api.example.com/v1"},
		{"https://api.example.com/v1/chat/completions", "https://api.example.com/v1"},
		{"https://api.example.com/v1/Chat/Completions", "https://api.example.com/v1"},
		{"HTTPS://API.Example.COM/V1", "https://api.example.com/V1"},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080"},
		{"http://127.0.0.1:8080/", "http://127.0.0.1:8080"},
		{"http://[::1]:8080/v1", "http://[::1]:8080/v1"},
		{"https://openrouter.ai/api/v1", "https://openrouter.ai/api/v1"},
		// Only the last segment is a pasted request path.
		{"https://h/models/v1", "https://h/models/v1"},
		{"https://h/v1/mymodels", "https://h/v1/mymodels"},
		{"", ""},
		{"localhost:11434/v1", ""},
		{"ftp://host/v1", ""},
		{"http://", ""},
		{"http:///v1", ""},
		{"file:///etc/passwd", ""},
		{"javascript:alert(1)", ""},
		{"http://user:pass@host/v1", ""},
		{"http://host/v1?key=abc", ""},
		{"http://host/v1#frag", ""},
		{"http://host:port/v1", ""},
		{"http://" + strings.Repeat("a", 3000), ""},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := NormalizeBaseURL(tc.in)
			if tc.want == "" {
				wantField(t, err, "base_url")
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestParseHeaders(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want map[string]string // nil means refused
	}{
		{"empty", "", map[string]string{}},
		{"blank lines", "\n\n  \n", map[string]string{}},
		{"one", "HTTP-Referer: https://example.com", map[string]string{"Http-Referer": "https://example.com"}},
		{"several, CRLF, spaces", "X-Title:  LLeMbas \r\nx-api-version:2\r\n", map[string]string{"X-Title": "LLeMbas", "X-Api-Version": "2"}},
		{"colon in value", "X-Url: http://a:b/c", map[string]string{"X-Url": "http://a:b/c"}},
		{"token punctuation", "X-A.b_c~d!: 1", map[string]string{"X-A.b_c~d!": "1"}},
		{"tab in value", "X-T: a\tb", map[string]string{"X-T": "a\tb"}},
		{"no colon", "X-Title LLeMbas", nil},
		{"no name", ": value", nil},
		{"space in name", "X Title: a", nil},
		{"non-token name", "X(Title): a", nil},
		{"non-ascii name", "Tïtle: a", nil},
		{"empty value", "X-Title:", nil},
		{"authorization", "Authorization: Bearer sk-1", nil},
		{"authorization lower", "authorization: Bearer sk-1", nil},
		{"host", "Host: evil", nil},
		{"content-length", "Content-Length: 5", nil},
		{"duplicate", "X-A: 1\nx-a: 2", nil},
		{"control char", "X-A: a\x00b", nil},
		{"too long", "X-A: " + strings.Repeat("v", MaxHeaderValue+1), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseHeaders(tc.in)
			if tc.want == nil {
				wantField(t, err, "headers")
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
	var many strings.Builder
	for i := range MaxHeaders + 1 {
		fmt.Fprintf(&many, "X-H%d: v\n", i)
	}
	_, err := ParseHeaders(many.String())
	wantField(t, err, "headers")
}

func TestConnectionValidationNamesFields(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.conn(t, "Local", "http://localhost:11434/v1")
	ok := ConnectionForm{Name: "Other", BaseURL: "http://h/v1"}
	for _, tc := range []struct {
		field string
		edit  func(*ConnectionForm)
	}{
		{"name", func(f *ConnectionForm) { f.Name = "  " }},
		{"name", func(f *ConnectionForm) { f.Name = strings.Repeat("n", MaxConnectionName+1) }},
		{"name", func(f *ConnectionForm) { f.Name = "a\nb" }},
		{"name", func(f *ConnectionForm) { f.Name = "LOCAL" }}, // unique, case-insensitively
		{"base_url", func(f *ConnectionForm) { f.BaseURL = "localhost" }},
		{"api_key", func(f *ConnectionForm) { f.APIKey = "sk\n1" }},
		{"headers", func(f *ConnectionForm) { f.Headers = "Authorization: x" }},
		{"timeout", func(f *ConnectionForm) { f.Timeout = "0" }},
		{"timeout", func(f *ConnectionForm) { f.Timeout = "301" }},
		{"timeout", func(f *ConnectionForm) { f.Timeout = "ten" }},
		{"timeout", func(f *ConnectionForm) { f.Timeout = "1.5" }},
	} {
		f := ok
		tc.edit(&f)
		_, err := e.s.CreateConnection(ctx, f)
		wantField(t, err, tc.field)
	}
	c, err := e.s.CreateConnection(ctx, ok)
	if err != nil {
		t.Fatal(err)
	}
	if c.Timeout != DefaultTimeout || !c.Enabled || c.LastStatus != "" || !c.LastCheckedAt.IsZero() {
		t.Fatalf("new connection: %+v", c)
	}
	// Renaming onto another connection's name is refused on update too.
	_, err = e.s.UpdateConnection(ctx, c.ID, ConnectionForm{Name: "local", BaseURL: "http://h/v1"})
	wantField(t, err, "name")
	c, err = e.s.UpdateConnection(ctx, c.ID, ConnectionForm{Name: "Renamed", BaseURL: "http://h/v1/models/", Timeout: "300"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "Renamed" || c.BaseURL != "http://h/v1" || c.Timeout != 300*time.Second {
		t.Fatalf("after update: %+v", c)
	}
}

func TestUpdateConnectionKeepsAndClearsKey(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c, err := e.s.CreateConnection(ctx, ConnectionForm{Name: "A", BaseURL: "http://h/v1", APIKey: " sk-first-key-0001 "})
	if err != nil {
		t.Fatal(err)
	}
	key := func() string {
		t.Helper()
		c, err := e.s.GetConnection(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		ep, err := e.s.Endpoint(c)
		if err != nil {
			t.Fatal(err)
		}
		return ep.APIKey
	}
	if got := key(); got != "sk-first-key-0001" {
		t.Fatalf("key %q", got)
	}
	form := ConnectionForm{Name: "A", BaseURL: "http://h/v1"}
	if _, err := e.s.UpdateConnection(ctx, c.ID, form); err != nil {
		t.Fatal(err)
	}
	if got := key(); got != "sk-first-key-0001" {
		t.Fatalf("an empty key field replaced the key: %q", got)
	}
	form.APIKey = "sk-second-key-0002"
	c2, err := e.s.UpdateConnection(ctx, c.ID, form)
	if err != nil {
		t.Fatal(err)
	}
	if got := key(); got != "sk-second-key-0002" || c2.KeyMask != "••••••••0002" || !c2.HasKey {
		t.Fatalf("key %q, view %+v", got, c2)
	}
	form.ClearAPIKey = true
	_, err = e.s.UpdateConnection(ctx, c.ID, form)
	wantField(t, err, "api_key")
	form.APIKey = ""
	c3, err := e.s.UpdateConnection(ctx, c.ID, form)
	if err != nil {
		t.Fatal(err)
	}
	if got := key(); got != "" || c3.HasKey || c3.KeyMask != "" {
		t.Fatalf("after clearing: key %q, view %+v", got, c3)
	}
}

func TestUpdateConnectionKeepsHeaderValues(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c, err := e.s.CreateConnection(ctx, ConnectionForm{Name: "A", BaseURL: "http://h/v1",
		Headers: "X-Title: LLeMbas\nHTTP-Referer: https://example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"Http-Referer", "X-Title"}; !reflect.DeepEqual(c.HeaderNames, want) {
		t.Fatalf("names %v", c.HeaderNames)
	}
	if got := c.HeadersText(); got != "Http-Referer:\nX-Title:\n" {
		t.Fatalf("prefill %q", got)
	}
	// The prefilled form saved unchanged keeps every value.
	c, err = e.s.UpdateConnection(ctx, c.ID, ConnectionForm{Name: "A", BaseURL: "http://h/v1", Headers: c.HeadersText()})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := e.s.Endpoint(c)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"X-Title": "LLeMbas", "Http-Referer": "https://example.com"}; !reflect.DeepEqual(ep.Headers, want) {
		t.Fatalf("headers %v", ep.Headers)
	}
	// Keep one, drop one, change nothing else, add one.
	c, err = e.s.UpdateConnection(ctx, c.ID, ConnectionForm{Name: "A", BaseURL: "http://h/v1", Headers: "x-title:\nX-New: yes"})
	if err != nil {
		t.Fatal(err)
	}
	ep, _ = e.s.Endpoint(c)
	if want := map[string]string{"X-Title": "LLeMbas", "X-New": "yes"}; !reflect.DeepEqual(ep.Headers, want) {
		t.Fatalf("headers %v", ep.Headers)
	}
	// An empty value for a header that is not stored has nothing to keep.
	_, err = e.s.UpdateConnection(ctx, c.ID, ConnectionForm{Name: "A", BaseURL: "http://h/v1", Headers: "X-Other:"})
	wantField(t, err, "headers")
}

// Hard rule 5: the key and header values are sealed at rest, shown masked,
// and in plaintext only inside an llm.Endpoint.
func TestSecretsNeverInPlaintext(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const key = "sk-plaintext-key-must-not-leak-7890"
	const hdr = "header-secret-must-not-leak-4321"
	c, err := e.s.CreateConnection(ctx, ConnectionForm{Name: "A", BaseURL: "http://h/v1", APIKey: key,
		Headers: "X-Api-Token: " + hdr})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.UpdateConnection(ctx, c.ID, ConnectionForm{Name: "B", BaseURL: "http://h/v1",
		Headers: "X-Api-Token:"}); err != nil {
		t.Fatal(err)
	}
	list, err := e.s.ListConnections(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.s.GetConnection(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []Connection{c, got, list[0]} {
		dump := fmt.Sprintf("%+v %#v", v, v)
		if strings.Contains(dump, key) || strings.Contains(dump, hdr) {
			t.Fatalf("a view carries plaintext: %s", dump)
		}
		if v.KeyMask != "••••••••7890" {
			t.Fatalf("mask %q", v.KeyMask)
		}
	}
	ep, err := e.s.Endpoint(got)
	if err != nil || ep.APIKey != key || ep.Headers["X-Api-Token"] != hdr {
		t.Fatalf("endpoint %+v, %v", ep, err)
	}

	e.db.Close()
	files, _ := filepath.Glob(filepath.Join(e.dir, "lembas.db*"))
	if len(files) == 0 {
		t.Fatal("no database files")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{key, hdr, key[len(key)-12:], hdr[:12]} {
			if bytes.Contains(b, []byte(secret)) {
				t.Fatalf("%s holds %q in plaintext", filepath.Base(f), secret)
			}
		}
	}
}

func TestEndpointWithAnotherSecretKey(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c, err := e.s.CreateConnection(ctx, ConnectionForm{Name: "A", BaseURL: "http://h/v1", APIKey: "sk-abcdefghijklmnop"})
	if err != nil {
		t.Fatal(err)
	}
	other := newEnv(t)
	s2 := New(e.db, other.s.box, Options{Lister: e.lister})
	v, err := s2.GetConnection(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !v.KeyUnreadable || v.KeyMask != "" || !v.HasKey {
		t.Fatalf("view %+v", v)
	}
	if _, err := s2.Endpoint(v); fmt.Sprint(err) == "" || !strings.Contains(err.Error(), "different secret key") {
		t.Fatalf("Endpoint: %v", err)
	}
	res, err := s2.Test(ctx, c.ID)
	if err != nil || res.Err == nil {
		t.Fatalf("Test: %+v, %v", res, err)
	}
	v, _ = s2.GetConnection(ctx, c.ID)
	if v.LastStatus != "error" || !strings.Contains(v.LastError, "Enter them again") {
		t.Fatalf("status %q %q", v.LastStatus, v.LastError)
	}
}

func TestSeedFromEnvironmentOnce(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if created, err := e.s.SeedFromEnvironment(ctx, "", "sk-x"); created || err != nil {
		t.Fatalf("no URL: %v %v", created, err)
	}
	if _, err := e.s.SeedFromEnvironment(ctx, "localhost:11434", ""); err == nil || !strings.Contains(err.Error(), "LEMBAS_OPENAI_BASE_URL") {
		t.Fatalf("bad URL: %v", err)
	}
	created, err := e.s.SeedFromEnvironment(ctx, "http://LocalHost:11434/v1/", "sk-env-key-123456")
	if err != nil || !created {
		t.Fatalf("first seed: %v %v", created, err)
	}
	list, _ := e.s.ListConnections(ctx)
	if len(list) != 1 || list[0].Name != "localhost" || list[0].BaseURL != "http://localhost:11434/v1" || !list[0].FromEnvironment {
		t.Fatalf("seeded %+v", list)
	}
	if e.lister.calls != 0 {
		t.Fatal("seeding contacted the server")
	}
	ep, _ := e.s.Endpoint(list[0])
	if ep.APIKey != "sk-env-key-123456" {
		t.Fatalf("key %q", ep.APIKey)
	}
	if created, err := e.s.SeedFromEnvironment(ctx, "http://localhost:11434/v1", ""); created || err != nil {
		t.Fatalf("second start seeded again: %v %v", created, err)
	}
	if err := e.s.DeleteConnection(ctx, list[0].ID); err != nil {
		t.Fatal(err)
	}
	if created, err := e.s.SeedFromEnvironment(ctx, "http://localhost:11434/v1", ""); created || err != nil {
		t.Fatalf("a deleted seeded connection came back: %v %v", created, err)
	}
}

func TestSeedAvoidsTakenName(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.conn(t, "localhost", "http://localhost:8000/v1")
	if created, err := e.s.SeedFromEnvironment(ctx, "http://localhost:11434/v1", ""); !created || err != nil {
		t.Fatalf("%v %v", created, err)
	}
	list, _ := e.s.ListConnections(ctx)
	if len(list) != 2 || list[1].Name != "localhost (2)" {
		t.Fatalf("%+v", list)
	}
}

func TestParseConnectionForm(t *testing.T) {
	f := ParseConnectionForm(map[string][]string{
		"name": {"A"}, "base_url": {"http://h"}, "api_key": {"k"}, "clear_api_key": {"on"},
		"headers": {"X: y"}, "timeout": {"5"},
	})
	want := ConnectionForm{Name: "A", BaseURL: "http://h", APIKey: "k", ClearAPIKey: true, Headers: "X: y", Timeout: "5"}
	if f != want {
		t.Fatalf("%+v", f)
	}
}
