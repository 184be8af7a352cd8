package catalog

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"lembas/internal/db"
	"lembas/internal/fault"
	"lembas/internal/llm"
	"lembas/internal/secret"
)

// ErrNoConnection is returned when a connection does not exist.
var ErrNoConnection = fault.New(fault.NotFound, "That connection does not exist.")

// Limits on a connection's fields.
const (
	MaxConnectionName = 80
	MaxBaseURL        = 2000
	MaxAPIKey         = 4096
	MaxHeaders        = 20
	MaxHeaderValue    = 4096
	DefaultTimeout    = 10 * time.Second
	MinTimeout        = 1 * time.Second
	MaxTimeout        = 300 * time.Second
)

// Connection is what a page may know about a connection: the key masked,
// header names without their values. The sealed values ride along
// unexported so Endpoint can open them; no plaintext is kept here.
type Connection struct {
	ID      string
	Name    string
	BaseURL string
	// KeyMask is secret.Mask of the key: "" when there is none.
	KeyMask string
	HasKey  bool
	// KeyUnreadable means a key is stored but does not open under the
	// current secret key (it was changed): the administrator must enter the
	// key again.
	KeyUnreadable bool
	HeaderNames   []string // sorted; the values are never shown
	Enabled       bool
	Timeout       time.Duration
	// LastCheckedAt is zero when the connection was never tested or
	// discovered.
	LastCheckedAt time.Time
	LastStatus    string // "ok", "error", or "" (never checked)
	LastError     string // a sentence, when LastStatus is "error"
	LastDuration  time.Duration
	// FromEnvironment marks the connection seeded from
	// LEMBAS_OPENAI_BASE_URL, for the admin page's hint.
	FromEnvironment bool
	ModelCount      int
	CreatedAt       time.Time
	UpdatedAt       time.Time

	apiKeySealed string
	headers      map[string]string // name → sealed value
}

// ConnectionForm is the connection form as submitted. Field names in
// errors are the form's: name, base_url, api_key, headers, timeout.
type ConnectionForm struct {
	Name    string
	BaseURL string
	// APIKey is the key in plaintext. On update an empty APIKey keeps the
	// stored key; ClearAPIKey removes it.
	APIKey      string
	ClearAPIKey bool
	// Headers holds "Name: value" lines. On update a line with a name and
	// no value keeps that header's stored value, so a page can prefill the
	// names (never the values) and a person edits only what changes; a
	// header whose line is removed is removed.
	Headers string
	// Timeout is in seconds, 1–300; "" means 10.
	Timeout string
}

// ParseConnectionForm reads a submitted connection form. The checkbox
// clear_api_key counts when its value is "on", "1" or "true".
func ParseConnectionForm(form url.Values) ConnectionForm {
	return ConnectionForm{
		Name:        form.Get("name"),
		BaseURL:     form.Get("base_url"),
		APIKey:      form.Get("api_key"),
		ClearAPIKey: checkbox(form.Get("clear_api_key")),
		Headers:     form.Get("headers"),
		Timeout:     form.Get("timeout"),
	}
}

// HeadersText is what a connection's edit form prefills the headers field
// with: one "Name:" line per stored header, values left out (an empty value
// keeps the stored one on update).
func (c Connection) HeadersText() string {
	var b strings.Builder
	for _, n := range c.HeaderNames {
		b.WriteString(n + ":\n")
	}
	return b.String()
}

func checkbox(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "on", "1", "true", "yes":
		return true
	}
	return false
}

// validConnection is a ConnectionForm checked and normalised.
type validConnection struct {
	name    string
	baseURL string
	timeout time.Duration
}

func validateConnection(f ConnectionForm) (validConnection, error) {
	var v validConnection
	v.name = strings.TrimSpace(f.Name)
	switch {
	case v.name == "":
		return v, fault.Field("name", "Give the connection a name.")
	case utf8.RuneCountInString(v.name) > MaxConnectionName:
		return v, fault.Field("name", fmt.Sprintf("A connection's name has at most %d characters.", MaxConnectionName))
	case strings.IndexFunc(v.name, unicode.IsControl) >= 0:
		return v, fault.Field("name", "A connection's name cannot contain control characters.")
	}
	u, err := NormalizeBaseURL(f.BaseURL)
	if err != nil {
		return v, err
	}
	v.baseURL = u
	if len(f.APIKey) > MaxAPIKey {
		return v, fault.Field("api_key", fmt.Sprintf("An API key has at most %d characters.", MaxAPIKey))
	}
	if strings.ContainsFunc(strings.TrimSpace(f.APIKey), unicode.IsControl) {
		return v, fault.Field("api_key", "An API key cannot contain line breaks or control characters.")
	}
	v.timeout, err = parseTimeout(f.Timeout)
	return v, err
}

func parseTimeout(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return DefaultTimeout, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < int(MinTimeout/time.Second) || n > int(MaxTimeout/time.Second) {
		return 0, fault.Field("timeout", fmt.Sprintf("The timeout is a whole number of seconds from %d to %d.",
			int(MinTimeout/time.Second), int(MaxTimeout/time.Second)))
	}
	return time.Duration(n) * time.Second, nil
}

// NormalizeBaseURL checks an endpoint address and returns it in the form
// the llm client expects: http or https with a host, no trailing slash, and
// without a /models or /chat/completions a person pasted from a request.
// Credentials in the address are refused: they would be stored in
// plaintext, and the API key field exists for them.
func NormalizeBaseURL(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", fault.Field("base_url", "Give the server's address, for example http://localhost:11434/v1.")
	}
	if len(raw) > MaxBaseURL {
		return "", fault.Field("base_url", "That address is too long.")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" || u.Opaque != "" {
		if err == nil && u.Scheme == "" && !strings.Contains(raw, "://") {
			return "", fault.Field("base_url", "Start the address with http:// or https://.")
		}
		return "", fault.Field("base_url", "The address must be an http:// or https:// URL with a host, for example http://localhost:11434/v1.")
	}
	if u.User != nil {
		return "", fault.Field("base_url", "Leave credentials out of the address; put the key in the API key field.")
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return "", fault.Field("base_url", "The address cannot have a query (?…) or a fragment (#…).")
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	p := strings.TrimRight(u.Path, "/")
	for _, suffix := range []string{"/chat/completions", "/models"} {
		if len(p) >= len(suffix) && strings.EqualFold(p[len(p)-len(suffix):], suffix) {
			p = strings.TrimRight(p[:len(p)-len(suffix)], "/")
			break
		}
	}
	u.Path, u.RawPath = p, ""
	return u.String(), nil
}

// forbiddenHeader says why a header may not be stored: the client sets it
// itself, and a stored one would fight it or smuggle credentials past the
// masked key field.
func forbiddenHeader(canonical string) (why string, forbidden bool) {
	switch canonical {
	case "Authorization":
		return "Put the key in the API key field, not in a header.", true
	case "Proxy-Authorization":
		return "LLeMbas does not send proxy credentials as a header.", true
	case "Host":
		return "The Host header comes from the address.", true
	case "Content-Length", "Content-Type", "Transfer-Encoding":
		return canonical + " is set for each request.", true
	case "Connection":
		return "Connection is managed by the client.", true
	}
	return "", false
}

// ParseHeaders reads "Name: value" lines into a map keyed by canonical
// header name. Blank lines are skipped; every header needs a value.
func ParseHeaders(text string) (map[string]string, error) {
	lines, err := parseHeaderLines(text, nil)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(lines))
	for k, l := range lines {
		out[k] = l.value
	}
	return out, nil
}

// headerLine is one parsed header: a new value, or keep (the line named a
// stored header and gave no value).
type headerLine struct {
	value string
	keep  bool
}

// parseHeaderLines parses the headers field. A line with an empty value is
// accepted only for a name in stored, and means keep that value.
func parseHeaderLines(text string, stored map[string]string) (map[string]headerLine, error) {
	out := map[string]headerLine{}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		n := i + 1
		name, value, ok := strings.Cut(line, ":")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || name == "" {
			return nil, fault.Field("headers", fmt.Sprintf("Line %d: write each header as Name: value.", n))
		}
		if !validHeaderName(name) {
			return nil, fault.Field("headers", fmt.Sprintf("Line %d: %q is not a valid header name (letters, digits and !#$%%&'*+-.^_`|~ only).", n, name))
		}
		name = http.CanonicalHeaderKey(name)
		if why, bad := forbiddenHeader(name); bad {
			return nil, fault.Field("headers", fmt.Sprintf("Line %d: %s", n, why))
		}
		if _, dup := out[name]; dup {
			return nil, fault.Field("headers", fmt.Sprintf("Line %d: %s is given twice.", n, name))
		}
		if len(value) > MaxHeaderValue {
			return nil, fault.Field("headers", fmt.Sprintf("Line %d: a header value has at most %d characters.", n, MaxHeaderValue))
		}
		if strings.ContainsFunc(value, func(r rune) bool { return r != '\t' && unicode.IsControl(r) }) {
			return nil, fault.Field("headers", fmt.Sprintf("Line %d: a header value cannot contain control characters.", n))
		}
		if value == "" {
			if _, ok := stored[name]; !ok {
				return nil, fault.Field("headers", fmt.Sprintf("Line %d: give %s a value.", n, name))
			}
			out[name] = headerLine{keep: true}
		} else {
			out[name] = headerLine{value: value}
		}
		if len(out) > MaxHeaders {
			return nil, fault.Field("headers", fmt.Sprintf("At most %d headers.", MaxHeaders))
		}
	}
	return out, nil
}

// validHeaderName reports whether name is an RFC 9110 token.
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

func (s *Service) sealHeaders(plain map[string]string) (string, error) {
	sealed := make(map[string]string, len(plain))
	for k, v := range plain {
		sealed[k] = s.box.Seal(v)
	}
	b, err := json.Marshal(sealed)
	if err != nil {
		return "", fmt.Errorf("catalog: encode headers: %w", err)
	}
	return string(b), nil
}

// CreateConnection stores a new connection, enabled. It does not contact
// the server; Test or Discover does.
func (s *Service) CreateConnection(ctx context.Context, f ConnectionForm) (Connection, error) {
	v, err := validateConnection(f)
	if err != nil {
		return Connection{}, err
	}
	hdrs, err := ParseHeaders(f.Headers)
	if err != nil {
		return Connection{}, err
	}
	sealedHeaders, err := s.sealHeaders(hdrs)
	if err != nil {
		return Connection{}, err
	}
	id := db.NewID()
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		return s.insertConnection(ctx, tx, id, v, s.box.Seal(strings.TrimSpace(f.APIKey)), sealedHeaders)
	})
	if err != nil {
		return Connection{}, err
	}
	return s.GetConnection(ctx, id)
}

func (s *Service) insertConnection(ctx context.Context, tx *sql.Tx, id string, v validConnection, sealedKey, sealedHeaders string) error {
	now := s.nowMillis()
	_, err := tx.ExecContext(ctx,
		`INSERT INTO connections (id, name, base_url, api_key_sealed, headers, enabled, timeout_ms, created_at, updated_at)
		 VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?)`,
		id, v.name, v.baseURL, sealedKey, sealedHeaders, v.timeout.Milliseconds(), now, now)
	if isUniqueViolation(err) {
		return fault.Field("name", "Another connection already has that name.")
	}
	if err != nil {
		return fmt.Errorf("catalog: insert connection: %w", err)
	}
	return nil
}

// UpdateConnection saves an edited connection. An empty API key keeps the
// stored one unless ClearAPIKey is set; see ConnectionForm.Headers for how
// header values are kept.
func (s *Service) UpdateConnection(ctx context.Context, id string, f ConnectionForm) (Connection, error) {
	v, err := validateConnection(f)
	if err != nil {
		return Connection{}, err
	}
	key := strings.TrimSpace(f.APIKey)
	if f.ClearAPIKey && key != "" {
		return Connection{}, fault.Field("api_key", "Either enter a new key or clear it, not both.")
	}
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		var sealedKey, storedHeaders string
		err := tx.QueryRowContext(ctx, `SELECT api_key_sealed, headers FROM connections WHERE id = ?`, id).
			Scan(&sealedKey, &storedHeaders)
		if err != nil {
			return noRows(err, "connection "+id, ErrNoConnection)
		}
		var stored map[string]string // name → sealed value
		if err := json.Unmarshal([]byte(storedHeaders), &stored); err != nil {
			return fmt.Errorf("catalog: connection %s: headers: %w", id, err)
		}
		lines, err := parseHeaderLines(f.Headers, stored)
		if err != nil {
			return err
		}
		sealed := make(map[string]string, len(lines))
		for k, l := range lines {
			if l.keep {
				sealed[k] = stored[k]
			} else {
				sealed[k] = s.box.Seal(l.value)
			}
		}
		b, err := json.Marshal(sealed)
		if err != nil {
			return fmt.Errorf("catalog: encode headers: %w", err)
		}
		switch {
		case f.ClearAPIKey:
			sealedKey = ""
		case key != "":
			sealedKey = s.box.Seal(key)
		}
		_, err = tx.ExecContext(ctx,
			`UPDATE connections SET name = ?, base_url = ?, api_key_sealed = ?, headers = ?, timeout_ms = ?, updated_at = ?
			 WHERE id = ?`,
			v.name, v.baseURL, sealedKey, string(b), v.timeout.Milliseconds(), s.nowMillis(), id)
		if isUniqueViolation(err) {
			return fault.Field("name", "Another connection already has that name.")
		}
		if err != nil {
			return fmt.Errorf("catalog: update connection %s: %w", id, err)
		}
		return nil
	})
	if err != nil {
		return Connection{}, err
	}
	return s.GetConnection(ctx, id)
}

// SetConnectionEnabled switches a connection on or off. A disabled
// connection's models leave every picker and are not refreshed at start.
func (s *Service) SetConnectionEnabled(ctx context.Context, id string, enabled bool) error {
	res, err := s.db.W.ExecContext(ctx, `UPDATE connections SET enabled = ?, updated_at = ? WHERE id = ?`,
		boolInt(enabled), s.nowMillis(), id)
	return oneRow(res, err, "connection "+id, ErrNoConnection)
}

// oneRow checks that an UPDATE or DELETE touched its row.
func oneRow(res sql.Result, err error, what string, notFound error) error {
	if err != nil {
		return fmt.Errorf("catalog: %s: %w", what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("catalog: %s: %w", what, err)
	}
	if n == 0 {
		return fmt.Errorf("catalog: %s: %w", what, notFound)
	}
	return nil
}

// DeleteConnection removes a connection with its models (their group
// restrictions with them) and their avatar files, and closes the gap the
// models leave in the order.
func (s *Service) DeleteConnection(ctx context.Context, id string) error {
	var files []string
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT avatar_file FROM models WHERE connection_id = ? AND avatar_file != ''`, id)
		if err != nil {
			return fmt.Errorf("catalog: delete connection %s: %w", id, err)
		}
		for rows.Next() {
			var f string
			if err := rows.Scan(&f); err != nil {
				rows.Close()
				return fmt.Errorf("catalog: delete connection %s: %w", id, err)
			}
			files = append(files, f)
		}
		if err := rows.Err(); err != nil {
			rows.Close()
			return fmt.Errorf("catalog: delete connection %s: %w", id, err)
		}
		rows.Close()
		res, err := tx.ExecContext(ctx, `DELETE FROM connections WHERE id = ?`, id)
		if err := oneRow(res, err, "delete connection "+id, ErrNoConnection); err != nil {
			return err
		}
		return renumber(ctx, tx)
	})
	if err != nil {
		return err
	}
	for _, f := range files {
		s.removeAvatarFile(f)
	}
	return nil
}

const connectionColumns = `c.id, c.name, c.base_url, c.api_key_sealed, c.headers, c.enabled, c.timeout_ms,
	c.last_checked_at, c.last_status, c.last_error, c.last_duration_ms, c.created_at, c.updated_at,
	EXISTS (SELECT 1 FROM catalog_seed cs WHERE cs.connection_id = c.id),
	(SELECT COUNT(*) FROM models m WHERE m.connection_id = c.id)`

type scanner interface{ Scan(dest ...any) error }

func (s *Service) scanConnection(sc scanner) (Connection, error) {
	var c Connection
	var headers string
	var timeoutMs, checked, durMs, created, updated int64
	err := sc.Scan(&c.ID, &c.Name, &c.BaseURL, &c.apiKeySealed, &headers, &c.Enabled, &timeoutMs,
		&checked, &c.LastStatus, &c.LastError, &durMs, &created, &updated, &c.FromEnvironment, &c.ModelCount)
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal([]byte(headers), &c.headers); err != nil {
		return c, fmt.Errorf("connection %s: headers: %w", c.ID, err)
	}
	for k := range c.headers {
		c.HeaderNames = append(c.HeaderNames, k)
	}
	slices.Sort(c.HeaderNames)
	c.Timeout = time.Duration(timeoutMs) * time.Millisecond
	c.LastDuration = time.Duration(durMs) * time.Millisecond
	if checked > 0 {
		c.LastCheckedAt = db.Time(checked)
	}
	c.CreatedAt, c.UpdatedAt = db.Time(created), db.Time(updated)
	if c.apiKeySealed != "" {
		c.HasKey = true
		plain, err := s.box.Open(c.apiKeySealed)
		if err != nil {
			c.KeyUnreadable = true
		} else {
			c.KeyMask = secret.Mask(plain)
		}
	}
	return c, nil
}

// GetConnection loads one connection.
func (s *Service) GetConnection(ctx context.Context, id string) (Connection, error) {
	row := s.db.R.QueryRowContext(ctx, `SELECT `+connectionColumns+` FROM connections c WHERE c.id = ?`, id)
	c, err := s.scanConnection(row)
	if err != nil {
		return Connection{}, noRows(err, "connection "+id, ErrNoConnection)
	}
	return c, nil
}

// ListConnections returns every connection by name.
func (s *Service) ListConnections(ctx context.Context) ([]Connection, error) {
	return s.queryConnections(ctx, `SELECT `+connectionColumns+` FROM connections c ORDER BY c.name, c.id`)
}

func (s *Service) queryConnections(ctx context.Context, query string, args ...any) ([]Connection, error) {
	rows, err := s.db.R.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("catalog: list connections: %w", err)
	}
	defer rows.Close()
	var out []Connection
	for rows.Next() {
		c, err := s.scanConnection(rows)
		if err != nil {
			return nil, fmt.Errorf("catalog: list connections: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("catalog: list connections: %w", err)
	}
	return out, nil
}

// ErrKeyUnreadable is returned by Endpoint when the stored key or a header
// value does not open under the current secret key.
var ErrKeyUnreadable = fault.New(fault.Conflict, "This connection's stored API key or headers were sealed under a different secret key. Enter them again.")

// Endpoint is the one place a connection's key and header values are
// opened: the plaintext goes to the llm client and nowhere else.
func (s *Service) Endpoint(c Connection) (llm.Endpoint, error) {
	ep := llm.Endpoint{BaseURL: c.BaseURL, Timeout: c.Timeout}
	key, err := s.box.Open(c.apiKeySealed)
	if err != nil {
		return llm.Endpoint{}, fmt.Errorf("catalog: connection %s: key: %w", c.ID, errors.Join(ErrKeyUnreadable, err))
	}
	ep.APIKey = key
	if len(c.headers) > 0 {
		ep.Headers = make(map[string]string, len(c.headers))
		for k, sealed := range c.headers {
			v, err := s.box.Open(sealed)
			if err != nil {
				return llm.Endpoint{}, fmt.Errorf("catalog: connection %s: header %s: %w", c.ID, k, errors.Join(ErrKeyUnreadable, err))
			}
			ep.Headers[k] = v
		}
	}
	return ep, nil
}

// SeedFromEnvironment creates one connection from LEMBAS_OPENAI_BASE_URL
// and LEMBAS_OPENAI_API_KEY, named after the host, on the first start only:
// a marker row remembers that it happened, so an administrator who deletes
// the connection does not see it come back. It contacts nothing; the
// start-up refresh discovers the models. created says whether a connection
// was made.
func (s *Service) SeedFromEnvironment(ctx context.Context, baseURL, apiKey string) (created bool, err error) {
	if strings.TrimSpace(baseURL) == "" {
		return false, nil
	}
	norm, err := NormalizeBaseURL(baseURL)
	if err != nil {
		if fe, ok := fault.As(err); ok {
			return false, fmt.Errorf("LEMBAS_OPENAI_BASE_URL: %s", fe.Message)
		}
		return false, err
	}
	u, _ := url.Parse(norm)
	v := validConnection{name: u.Hostname(), baseURL: norm, timeout: DefaultTimeout}
	key := strings.TrimSpace(apiKey)
	if strings.ContainsFunc(key, unicode.IsControl) || len(key) > MaxAPIKey {
		return false, errors.New("LEMBAS_OPENAI_API_KEY: not a usable key (too long, or contains control characters)")
	}
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		var seeded int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM catalog_seed`).Scan(&seeded); err != nil {
			return fmt.Errorf("catalog: seed: %w", err)
		}
		if seeded > 0 {
			return nil
		}
		// A connection an administrator already made may have the host's
		// name; the seeded one then takes "host (2)" and so on.
		base := v.name
		for i := 2; ; i++ {
			var taken int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM connections WHERE name = ?`, v.name).Scan(&taken); err != nil {
				return fmt.Errorf("catalog: seed: %w", err)
			}
			if taken == 0 {
				break
			}
			v.name = fmt.Sprintf("%s (%d)", base, i)
		}
		id := db.NewID()
		if err := s.insertConnection(ctx, tx, id, v, s.box.Seal(key), "{}"); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO catalog_seed (id, connection_id, seeded_at) VALUES (1, ?, ?)`,
			id, s.nowMillis()); err != nil {
			return fmt.Errorf("catalog: seed marker: %w", err)
		}
		created = true
		return nil
	})
	return created, err
}
