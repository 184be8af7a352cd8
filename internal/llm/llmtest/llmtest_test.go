package llmtest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func post(t *testing.T, s *Server, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(s.URL+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// contentOf joins the content of a non-streamed answer.
func contentOf(t *testing.T, body string) string {
	t.Helper()
	var c struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal([]byte(body), &c); err != nil || len(c.Choices) == 0 {
		t.Fatalf("%s: %v", body, err)
	}
	return c.Choices[0].Message.Content
}

func TestScriptOrder(t *testing.T) {
	s := NewServer(t)
	s.Script("m", Reply{Content: "one"}, Reply{Content: "two"})
	s.Default(Reply{Content: "default"})
	s.Enqueue(Reply{Content: "queued"})
	var got []string
	for _, model := range []string{"m", "m", "m", "m", "other"} {
		code, body := post(t, s, `{"model":"`+model+`","messages":[]}`)
		if code != 200 {
			t.Fatalf("%d %s", code, body)
		}
		got = append(got, contentOf(t, body))
	}
	// The queue first, then the script in order, its last reply kept.
	if want := "queued one two two default"; strings.Join(got, " ") != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestUnknownModelAndPath(t *testing.T) {
	s := NewServer(t)
	if code, body := post(t, s, `{"model":"ghost"}`); code != 404 || !strings.Contains(body, `ghost`) {
		t.Fatalf("%d %s", code, body)
	}
	resp, err := http.Get(s.URL + "/embeddings")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("unknown path: %d", resp.StatusCode)
	}
	if n := len(s.Requests()); n != 2 {
		t.Fatalf("recorded %d requests", n)
	}
}

func TestRequireKey(t *testing.T) {
	s := NewServer(t)
	s.RequireKey("sk-1")
	req, _ := http.NewRequest("GET", s.URL+"/models", nil)
	req.Header.Set("Authorization", "Bearer sk-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("right key: %d", resp.StatusCode)
	}
	if code, _ := post(t, s, `{"model":"m"}`); code != 401 {
		t.Fatalf("no key: %d", code)
	}
}

// The stream the fake writes is the one the quirks describe.
func TestStreamFraming(t *testing.T) {
	s := NewServer(t)
	s.Default(Reply{Content: "ab", Chunk: 1, CRLF: true, NoSpace: true, Keepalive: 1, Usage: true})
	resp, err := http.Post(s.URL+"/chat/completions", "application/json", strings.NewReader(`{"model":"m","stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	body := string(b)
	for _, want := range []string{"data:{", "\r\n\r\n", ": keepalive\r\n", `"choices":[]`, `"usage":{`, "data:[DONE]\r\n\r\n"} {
		if !strings.Contains(body, want) {
			t.Fatalf("stream lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(strings.ReplaceAll(body, "\r\n", ""), "\n") {
		t.Fatalf("a bare \\n in a CRLF stream:\n%q", body)
	}
}

// Configuring and reading the server while it serves is safe under -race.
func TestConcurrentUse(t *testing.T) {
	s := NewServer(t)
	s.Default(Reply{Content: "hello there", Chunk: 2})
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			resp, err := http.Post(s.URL+"/chat/completions", "application/json",
				strings.NewReader(fmt.Sprintf(`{"model":"m%d","stream":%v}`, i, i%2 == 0)))
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		})
		wg.Go(func() {
			s.Script(fmt.Sprint("m", i), Reply{Content: "scripted"})
			_ = s.Requests()
			_ = s.LastRequest()
		})
	}
	wg.Wait()
	if n := len(s.Requests()); n != 16 {
		t.Fatalf("recorded %d", n)
	}
}

func TestStallObservesTheClientLeaving(t *testing.T) {
	s := NewServer(t)
	s.Default(Reply{Content: "abcdef", Chunk: 2, StallAfter: 1})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", s.URL+"/chat/completions", strings.NewReader(`{"model":"m","stream":true}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(resp.Body)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(line, `"content":"ab"`) {
			break
		}
	}
	cancel()
	resp.Body.Close()
	wctx, wcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer wcancel()
	if err := s.WaitClientsGone(wctx, 1); err != nil {
		t.Fatal(err)
	}
}

// Close does not wait for a client that never reads.
func TestCloseReleasesHangingRequests(t *testing.T) {
	s := New()
	s.SetHang(true)
	go func() {
		resp, err := http.Post(s.URL+"/chat/completions", "application/json", strings.NewReader(`{}`))
		if err == nil {
			resp.Body.Close()
		}
	}()
	for len(s.Requests()) == 0 {
		time.Sleep(time.Millisecond)
	}
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close waited on a hanging request")
	}
}
