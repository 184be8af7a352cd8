// Package config reads LLeMbas's deployment configuration: LEMBAS_*
// environment variables, overridden by command-line flags. It holds no
// global state; main builds one Config and hands it to the app.
//
// Deployment configuration is not instance settings. A value here that also
// exists as an instance setting (sign-up, for one) only seeds the stored
// setting on the first start; after that the database wins (see settings).
package config

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"strings"
)

// Config is everything a deployment decides before the process starts.
type Config struct {
	Addr      string // listen address, host:port
	DataDir   string // database, secret key and files live here
	SecretKey string // base64 key from the environment; empty means use data/secret.key
	// AllowSignup seeds the instance's sign-up setting on first start. Nil
	// when the environment did not say, so the code default applies.
	AllowSignup *bool
	LogLevel    slog.Level
	Dev         bool // templates read from disk on each render
	// OpenAIBaseURL and OpenAIAPIKey seed one connection on first start.
	OpenAIBaseURL string
	OpenAIAPIKey  string
}

// Env looks up one environment variable; os.LookupEnv in production, a map
// in tests.
type Env func(name string) (string, bool)

// Load builds a Config from the environment and then the flags in args
// (flags win). A bad value is an error naming the variable or flag, in one
// sentence a person can act on.
func Load(env Env, args []string) (Config, error) {
	cfg := Config{
		Addr:     "127.0.0.1:8080",
		DataDir:  "./data",
		LogLevel: slog.LevelInfo,
	}
	if v, ok := env("LEMBAS_ADDR"); ok && v != "" {
		cfg.Addr = v
	}
	if v, ok := env("LEMBAS_DATA_DIR"); ok && v != "" {
		cfg.DataDir = v
	}
	if v, ok := env("LEMBAS_SECRET_KEY"); ok {
		cfg.SecretKey = strings.TrimSpace(v)
	}
	if v, ok := env("LEMBAS_ALLOW_SIGNUP"); ok && v != "" {
		b, err := parseBool(v)
		if err != nil {
			return cfg, fmt.Errorf("LEMBAS_ALLOW_SIGNUP must be true or false, not %q", v)
		}
		cfg.AllowSignup = &b
	}
	if v, ok := env("LEMBAS_LOG_LEVEL"); ok && v != "" {
		lvl, err := parseLevel(v)
		if err != nil {
			return cfg, fmt.Errorf("LEMBAS_LOG_LEVEL must be one of debug, info, warn or error, not %q", v)
		}
		cfg.LogLevel = lvl
	}
	if v, ok := env("LEMBAS_DEV"); ok && v != "" {
		b, err := parseBool(v)
		if err != nil {
			return cfg, fmt.Errorf("LEMBAS_DEV must be true or false, not %q", v)
		}
		cfg.Dev = b
	}
	if v, ok := env("LEMBAS_OPENAI_BASE_URL"); ok {
		cfg.OpenAIBaseURL = strings.TrimSpace(v)
	}
	if v, ok := env("LEMBAS_OPENAI_API_KEY"); ok {
		cfg.OpenAIAPIKey = strings.TrimSpace(v)
	}

	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(discard{})
	addr := fs.String("addr", cfg.Addr, "listen address (LEMBAS_ADDR)")
	dataDir := fs.String("data-dir", cfg.DataDir, "data directory (LEMBAS_DATA_DIR)")
	logLevel := fs.String("log-level", "", "debug, info, warn or error (LEMBAS_LOG_LEVEL)")
	dev := fs.Bool("dev", cfg.Dev, "read templates from disk on every render (LEMBAS_DEV)")
	if err := fs.Parse(args); err != nil {
		return cfg, fmt.Errorf("command line: %w", err)
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("command line: unexpected argument %q", fs.Arg(0))
	}
	cfg.Addr, cfg.DataDir, cfg.Dev = *addr, *dataDir, *dev
	if *logLevel != "" {
		lvl, err := parseLevel(*logLevel)
		if err != nil {
			return cfg, fmt.Errorf("-log-level must be one of debug, info, warn or error, not %q", *logLevel)
		}
		cfg.LogLevel = lvl
	}

	if _, port, err := net.SplitHostPort(cfg.Addr); err != nil || port == "" {
		return cfg, fmt.Errorf("LEMBAS_ADDR must be host:port (for example 127.0.0.1:8080), not %q", cfg.Addr)
	}
	if strings.TrimSpace(cfg.DataDir) == "" {
		return cfg, errors.New("LEMBAS_DATA_DIR must not be empty")
	}
	cfg.DataDir = filepath.Clean(cfg.DataDir)
	return cfg, nil
}

// FlagUsage describes the flags serve accepts, for `lembas help`.
const FlagUsage = `  -addr HOST:PORT     listen address (LEMBAS_ADDR, default 127.0.0.1:8080)
  -data-dir PATH      data directory (LEMBAS_DATA_DIR, default ./data)
  -log-level LEVEL    debug, info, warn or error (LEMBAS_LOG_LEVEL)
  -dev                read templates from disk on every render (LEMBAS_DEV)`

// DBPath is where the SQLite database lives.
func (c Config) DBPath() string { return filepath.Join(c.DataDir, "lembas.db") }

// SecretKeyPath is where a generated secret key is kept.
func (c Config) SecretKeyPath() string { return filepath.Join(c.DataDir, "secret.key") }

// FilesDir holds attachments and avatars under random names.
func (c Config) FilesDir() string { return filepath.Join(c.DataDir, "files") }

func parseBool(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true, nil
	case "0", "false", "no", "off":
		return false, nil
	}
	return strconv.ParseBool(v)
}

func parseLevel(v string) (slog.Level, error) {
	var lvl slog.Level
	err := lvl.UnmarshalText([]byte(strings.TrimSpace(v)))
	return lvl, err
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
