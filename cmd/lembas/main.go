// Command lembas runs and administers a LLeMbas instance.
//
//	lembas serve          run the web interface
//	lembas info           version, paths, schema and counts
//	lembas secret-key     print a new LEMBAS_SECRET_KEY
//	lembas create-admin   create an administrator, or promote an account
//	lembas version        print the version
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"golang.org/x/term"

	"lembas/internal/app"
	"lembas/internal/auth"
	"lembas/internal/config"
	"lembas/internal/db"
	"lembas/internal/fault"
	"lembas/internal/secret"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

const usage = `LLeMbas: a self-hosted web interface for OpenAI-compatible LLM endpoints.

Usage:
  lembas serve [flags]                 run the web interface
  lembas info [flags]                  version, paths, schema version and counts
  lembas secret-key                    print a new random LEMBAS_SECRET_KEY
  lembas create-admin [flags] NAME     create an administrator, or promote NAME
      --password-stdin                 read the password from standard input
  lembas version                       print the version

Flags (serve, info, create-admin); each has a LEMBAS_* variable, and the flag wins:
%s

Other variables: LEMBAS_SECRET_KEY, LEMBAS_ALLOW_SIGNUP, LEMBAS_OPENAI_BASE_URL,
LEMBAS_OPENAI_API_KEY.
`

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "lembas:", err)
		os.Exit(1)
	}
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintf(stderr, usage, config.FlagUsage)
		return errors.New("say what to do, for example `lembas serve`")
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve":
		return serve(rest, stderr)
	case "info":
		return info(rest, stdout)
	case "secret-key":
		fmt.Fprintln(stdout, secret.NewKey())
		return nil
	case "create-admin":
		return createAdmin(rest, stdin, stdout, stderr)
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, "lembas", version)
		return nil
	case "help", "--help", "-h":
		fmt.Fprintf(stdout, usage, config.FlagUsage)
		return nil
	}
	return fmt.Errorf("unknown command %q; run `lembas help`", cmd)
}

func newLogger(cfg config.Config, w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: cfg.LogLevel}))
}

func serve(args []string, stderr io.Writer) error {
	cfg, err := config.Load(os.LookupEnv, args)
	if err != nil {
		return err
	}
	log := newLogger(cfg, stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	a, err := app.New(ctx, cfg, log, app.Options{Version: version})
	if err != nil {
		return err
	}
	ln, err := a.Listen()
	if err != nil {
		a.Close()
		return err
	}
	return a.Serve(ctx, ln)
}

func info(args []string, stdout io.Writer) error {
	cfg, err := config.Load(os.LookupEnv, args)
	if err != nil {
		return err
	}
	facts, err := db.Inspect(context.Background(), cfg.DBPath(), "users", "chats", "connections")
	if err != nil {
		return err
	}
	keySource := "generated file " + cfg.SecretKeyPath()
	if cfg.SecretKey != "" {
		keySource = "LEMBAS_SECRET_KEY"
	} else if _, err := os.Stat(cfg.SecretKeyPath()); err != nil {
		keySource = "none yet (generated on first start into " + cfg.SecretKeyPath() + ")"
	}
	fmt.Fprintf(stdout, "version      %s\n", version)
	fmt.Fprintf(stdout, "data dir     %s\n", cfg.DataDir)
	fmt.Fprintf(stdout, "database     %s\n", cfg.DBPath())
	fmt.Fprintf(stdout, "secret key   %s\n", keySource)
	fmt.Fprintf(stdout, "listen       %s\n", cfg.Addr)
	if !facts.Exists {
		fmt.Fprintf(stdout, "schema       no database yet (created on first start)\n")
		return nil
	}
	fmt.Fprintf(stdout, "schema       version %d (this binary knows %d)\n", facts.SchemaVersion, facts.KnownVersion)
	for _, t := range []string{"users", "chats", "connections"} {
		if n, ok := facts.Rows[t]; ok {
			fmt.Fprintf(stdout, "%-12s %d\n", t, n)
		} else {
			fmt.Fprintf(stdout, "%-12s not in this schema yet\n", t)
		}
	}
	return nil
}

func createAdmin(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("create-admin", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fromStdin := fs.Bool("password-stdin", false, "read the password from standard input")
	// Let the serve flags through so -data-dir works here too.
	dataDir := fs.String("data-dir", "", "data directory (LEMBAS_DATA_DIR)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("create-admin needs exactly one username, for example `lembas create-admin gandalf`")
	}
	username := fs.Arg(0)
	var cfgArgs []string
	if *dataDir != "" {
		cfgArgs = append(cfgArgs, "-data-dir", *dataDir)
	}
	cfg, err := config.Load(os.LookupEnv, cfgArgs)
	if err != nil {
		return err
	}
	password, err := readPassword(stdin, stderr, *fromStdin)
	if err != nil {
		return err
	}
	ctx := context.Background()
	a, err := app.New(ctx, cfg, newLogger(cfg, stderr), app.Options{Version: version})
	if err != nil {
		return err
	}
	defer a.Close()
	created, err := a.Auth.CreateOrPromoteAdmin(ctx, username, password)
	if fe, ok := fault.As(err); ok {
		return errors.New(fe.Message)
	}
	if err != nil {
		return err
	}
	if created {
		fmt.Fprintf(stdout, "Created administrator %s.\n", username)
	} else {
		fmt.Fprintf(stdout, "%s is now an administrator.\n", username)
	}
	return nil
}

// readPassword reads from stdin when asked to (one line), otherwise from
// the terminal twice without echo. Promoting an existing account needs no
// password: an empty answer keeps the current one.
func readPassword(stdin io.Reader, stderr io.Writer, fromStdin bool) (string, error) {
	if fromStdin {
		line, err := bufio.NewReader(stdin).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return "", fmt.Errorf("read password: %w", err)
		}
		return strings.TrimRight(line, "\r\n"), nil
	}
	fd := int(os.Stdin.Fd())
	if !term.IsTerminal(fd) {
		return "", errors.New("standard input is not a terminal; use --password-stdin to pipe the password")
	}
	fmt.Fprint(stderr, "Password (empty keeps an existing account's password): ")
	first, err := term.ReadPassword(fd)
	fmt.Fprintln(stderr)
	if err != nil {
		return "", fmt.Errorf("read password: %w", err)
	}
	if len(first) == 0 {
		return "", nil
	}
	if len(first) < auth.MinPassword {
		return "", fmt.Errorf("a password needs at least %d characters", auth.MinPassword)
	}
	fmt.Fprint(stderr, "Repeat the password: ")
	second, err := term.ReadPassword(fd)
	fmt.Fprintln(stderr)
	if err != nil {
		return "", fmt.Errorf("read password: %w", err)
	}
	if string(first) != string(second) {
		return "", errors.New("the two passwords do not match")
	}
	return string(first), nil
}
