package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"lembas/internal/llm/llmtest"
)

// A reply in flight writes what it has every few seconds, so killing the
// server with SIGKILL loses seconds, not the reply: after a restart the
// reply shows what it had, marked interrupted, with Regenerate.
func TestKilledMidReplyKeepsWhatArrived(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "lembas")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	up := llmtest.NewServer(t)
	up.SetModels(llmtest.ShapeOpenAI, llmtest.ModelSpec{ID: "slow-model"})
	up.Default(llmtest.Reply{Content: strings.Repeat("The road goes ever on and on. ", 400), TokensPerSecond: 40})
	data := t.TempDir()

	start := func() (*exec.Cmd, string) {
		port := freePort(t)
		addr := "127.0.0.1:" + port
		cmd := exec.Command(bin, "serve")
		cmd.Env = append(os.Environ(), "LEMBAS_ADDR="+addr, "LEMBAS_DATA_DIR="+data,
			"LEMBAS_OPENAI_BASE_URL="+up.URL, "LEMBAS_LOG_LEVEL=warn")
		cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		base := "http://" + addr
		deadline := time.Now().Add(10 * time.Second)
		for {
			if res, err := http.Get(base + "/healthz"); err == nil {
				res.Body.Close()
				if res.StatusCode == 200 {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatal("the server did not come up")
			}
			time.Sleep(20 * time.Millisecond)
		}
		return cmd, base
	}

	cmd, base := start()
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	res, err := client.PostForm(base+"/auth/register", url.Values{"username": {"frodo"}, "password": {"password1"}, "password_confirm": {"password1"}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	// The seeded connection's models are listed in the background.
	dbPath := filepath.Join(data, "lembas.db")
	var modelID string
	waitFor(t, 10*time.Second, func() bool {
		return queryOne(t, dbPath, `SELECT id FROM models LIMIT 1`, &modelID)
	})
	res, err = client.PostForm(base+"/api/chats/start", url.Values{"content": {"Sing me the walking song"}, "model": {modelID}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	chatURL := res.Request.URL.Path
	if !strings.HasPrefix(chatURL, "/chat/") {
		t.Fatalf("start landed on %s", chatURL)
	}

	// Wait until the reply has been written to disk at least once, then
	// kill the process without warning.
	var partial string
	waitFor(t, 15*time.Second, func() bool {
		return queryOne(t, dbPath, `SELECT content FROM messages WHERE role = 'assistant' AND status = 'streaming' AND content <> ''`, &partial)
	})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	_, base = start()
	jar2, _ := cookiejar.New(nil)
	client = &http.Client{Jar: jar2}
	res, err = client.PostForm(base+"/auth/login", url.Values{"username": {"frodo"}, "password": {"password1"}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	res, err = client.Get(base + chatURL)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	body := string(page)
	if !strings.Contains(body, "The road goes ever on") {
		t.Fatal("the reply's content was lost")
	}
	if !strings.Contains(body, "msg-interrupted") || !strings.Contains(body, "Regenerate") || strings.Contains(body, "data-stream") {
		t.Fatalf("the reply is not shown as interrupted with Regenerate:\n%s", body)
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
}

func waitFor(t *testing.T, within time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// queryOne reads one text value from the live database, read-only.
func queryOne(t *testing.T, path, query string, dst *string) bool {
	t.Helper()
	conn, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(2000)")
	if err != nil {
		return false
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return conn.QueryRowContext(ctx, query).Scan(dst) == nil
}
