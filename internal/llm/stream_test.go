package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"lembas/internal/llm/llmtest"
)

// result is a whole stream, put together the way the reply engine does:
// inline thinking split out, tool calls reassembled.
type result struct {
	content, reasoning string
	calls              []ToolCall
	finish             string
	usage              *Usage
	timings            *Timings
}

func drain(s *Stream) (result, error) {
	var r result
	var sp ThinkSplitter
	var asm ToolCallAssembler
	for {
		c, err := s.Next()
		if err != nil {
			a, th := sp.Flush()
			r.content += a
			r.reasoning += th
			r.calls = asm.Calls()
			if err == io.EOF {
				err = nil
			}
			return r, err
		}
		a, th := sp.Feed(c.Content)
		r.content += a
		r.reasoning += c.Reasoning + th
		for _, d := range c.ToolCalls {
			if err := asm.Add(d); err != nil {
				return r, err
			}
		}
		if c.FinishReason != "" {
			r.finish = c.FinishReason
		}
		if c.Usage != nil {
			r.usage = c.Usage
		}
		if c.Timings != nil {
			r.timings = c.Timings
		}
	}
}

func chat(model string) ChatRequest {
	return ChatRequest{Model: model, Messages: []Message{{Role: RoleUser, Content: "Tell me about foxes."}}}
}

const (
	answer  = "The quick brown fox — jumps over the lazy dog. ✓"
	thought = "Foxes are <small> canids; keep it short."
)

func TestStreamShapes(t *testing.T) {
	weather := []llmtest.ToolCall{
		{ID: "call_1", Name: "weather", Arguments: `{"city":"Bree","unit":"celsius"}`},
		{ID: "call_2", Name: "weather", Arguments: `{"city":"Hobbiton","unit":"celsius"}`},
	}
	wantCalls := []ToolCall{
		{ID: "call_1", Name: "weather", Arguments: `{"city":"Bree","unit":"celsius"}`},
		{ID: "call_2", Name: "weather", Arguments: `{"city":"Hobbiton","unit":"celsius"}`},
	}
	plain := result{content: answer, finish: "stop"}
	thinking := result{content: answer, reasoning: thought, finish: "stop"}

	tests := []struct {
		name  string
		reply llmtest.Reply
		want  result
		// usage, when true, checks a usage block arrived; false that none did.
		usage bool
	}{
		{name: "content deltas", reply: llmtest.Reply{Content: answer, Chunk: 3}, want: plain},
		{name: "one byte per delta", reply: llmtest.Reply{Content: answer, Chunk: 1}, want: plain},
		{name: "reasoning_content (llama.cpp, DeepSeek)", reply: llmtest.Reply{Content: answer, Reasoning: thought}, want: thinking},
		{name: "reasoning (OpenRouter, Ollama)", reply: llmtest.Reply{Content: answer, Reasoning: thought, ReasoningField: "reasoning"}, want: thinking},
		{name: "both fields at once are not doubled (vLLM)", reply: llmtest.Reply{Content: answer, Reasoning: thought, ReasoningField: "both"}, want: thinking},
		{name: "inline think, 1-byte deltas", reply: llmtest.Reply{Content: answer, Reasoning: thought, ThinkInline: true, Chunk: 1}, want: thinking},
		{name: "inline think, 2-byte deltas", reply: llmtest.Reply{Content: answer, Reasoning: thought, ThinkInline: true, Chunk: 2}, want: thinking},
		{name: "inline think, 3-byte deltas", reply: llmtest.Reply{Content: answer, Reasoning: thought, ThinkInline: true, Chunk: 3}, want: thinking},
		{name: "inline think, 5-byte deltas", reply: llmtest.Reply{Content: answer, Reasoning: thought, ThinkInline: true, Chunk: 5}, want: thinking},
		{
			name:  "inline think split at chosen bytes",
			reply: llmtest.Reply{Deltas: []string{"Hi <", "th", "ink>hm", "m</", "think", "> the", "re<", "/think>!"}},
			want:  result{content: "Hi  there!", reasoning: "hmm", finish: "stop"},
		},
		{
			name:  "two calls of one tool, by index",
			reply: llmtest.Reply{ToolCalls: weather, Chunk: 2},
			want:  result{calls: wantCalls, finish: "tool_calls"},
		},
		{
			name:  "tool-call fragments interleaved",
			reply: llmtest.Reply{ToolCalls: weather, Chunk: 3, InterleaveToolCalls: true},
			want:  result{calls: wantCalls, finish: "tool_calls"},
		},
		{
			name:  "each call whole (Ollama)",
			reply: llmtest.Reply{ToolCalls: weather, WholeToolCalls: true},
			want:  result{calls: wantCalls, finish: "tool_calls"},
		},
		{
			name:  "text, then calls",
			reply: llmtest.Reply{Content: "Let me look.", Reasoning: "Need weather.", ToolCalls: weather[:1]},
			want:  result{content: "Let me look.", reasoning: "Need weather.", calls: wantCalls[:1], finish: "tool_calls"},
		},
		{name: "usage chunk with empty choices", reply: llmtest.Reply{Content: answer, Usage: true}, want: plain, usage: true},
		{name: "usage on the finish chunk", reply: llmtest.Reply{Content: answer, UsageInFinish: true}, want: plain, usage: true},
		{name: "keepalive comments", reply: llmtest.Reply{Content: answer, Keepalive: 1}, want: plain},
		{name: "CRLF line endings", reply: llmtest.Reply{Content: answer, CRLF: true}, want: plain},
		{name: "data: without a space", reply: llmtest.Reply{Content: answer, NoSpace: true}, want: plain},
		{name: "event: lines", reply: llmtest.Reply{Content: answer, EventLines: true}, want: plain},
		{name: "multi-line data", reply: llmtest.Reply{Content: answer, SplitData: true}, want: plain},
		{
			name:  "every framing quirk at once",
			reply: llmtest.Reply{Content: answer, Reasoning: thought, CRLF: true, NoSpace: true, EventLines: true, SplitData: true, Keepalive: 2, Usage: true},
			want:  thinking, usage: true,
		},
		{name: "ends without [DONE] after a finish", reply: llmtest.Reply{Content: answer, NoDone: true}, want: plain},
		{name: "a finish of length", reply: llmtest.Reply{Content: answer, FinishReason: "length"}, want: result{content: answer, finish: "length"}},
		{name: "slow stream", reply: llmtest.Reply{Content: answer, Chunk: 8, TokensPerSecond: 200, Delay: 20 * time.Millisecond}, want: plain},
		{name: "nothing said", reply: llmtest.Reply{}, want: result{finish: "stop"}},
	}
	srv := llmtest.NewServer(t)
	c := New(Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.Enqueue(tt.reply)
			s, err := c.Stream(context.Background(), Endpoint{BaseURL: srv.URL}, chat("m"))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			got, err := drain(s)
			if err != nil {
				t.Fatal(err)
			}
			if (got.usage != nil) != tt.usage {
				t.Fatalf("usage = %+v, want present=%v", got.usage, tt.usage)
			}
			if got.usage != nil && (got.usage.PromptTokens == 0 || got.usage.TotalTokens != got.usage.PromptTokens+got.usage.CompletionTokens) {
				t.Fatalf("usage = %+v", got.usage)
			}
			got.usage = nil
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestStreamTimings(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Default(llmtest.Reply{Content: answer, Timings: true})
	s, err := New(Options{}).Stream(context.Background(), Endpoint{BaseURL: srv.URL}, chat("m"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := drain(s)
	if err != nil || got.timings == nil || got.timings.PredictedTokens == 0 || got.timings.PredictedMS == 0 {
		t.Fatalf("timings %+v, err %v", got.timings, err)
	}
}

// Failures mid-stream keep what arrived before them and end with a typed
// error carrying the server's words.
func TestStreamFailures(t *testing.T) {
	tests := []struct {
		name    string
		reply   llmtest.Reply
		kind    ErrorKind
		says    string
		content string
	}{
		{
			name:    "error object (OpenAI, llama.cpp)",
			reply:   llmtest.Reply{Content: "abcdefghij", Chunk: 2, ErrorAfter: 3, ErrorMessage: "Context size has been exceeded."},
			kind:    KindUpstream,
			says:    "reported an error: Context size has been exceeded.",
			content: "abcdef",
		},
		{
			name:    "error object (vLLM)",
			reply:   llmtest.Reply{Content: "abcdefghij", Chunk: 2, ErrorAfter: 1, ErrorMessage: "out of memory", ErrorShape: llmtest.ErrorVLLM},
			kind:    KindUpstream,
			says:    "reported an error: out of memory.",
			content: "ab",
		},
		{
			name:    "error as a bare string",
			reply:   llmtest.Reply{Content: "abcdefghij", Chunk: 2, ErrorAfter: 2, ErrorMessage: "rate limited", ErrorShape: llmtest.ErrorString},
			kind:    KindUpstream,
			says:    "rate limited.",
			content: "abcd",
		},
		{
			name:    "error as a named event",
			reply:   llmtest.Reply{Content: "abcdefghij", Chunk: 2, ErrorAfter: 2, ErrorMessage: "overloaded", ErrorShape: llmtest.ErrorEvent},
			kind:    KindUpstream,
			says:    "overloaded.",
			content: "abcd",
		},
		{
			name:  "error before anything",
			reply: llmtest.Reply{Content: "abc", ErrorMessage: "The model is loading."},
			kind:  KindUpstream,
			says:  "The model is loading.",
		},
		{
			name:    "connection dropped mid-stream",
			reply:   llmtest.Reply{Content: "abcdefghij", Chunk: 2, DisconnectAfter: 2},
			kind:    KindInterrupted,
			says:    "broke before the reply was finished.",
			content: "abcd",
		},
		{
			name:    "clean close with no finish and no [DONE]",
			reply:   llmtest.Reply{Content: "abcdefghij", Chunk: 5, NoFinish: true, NoDone: true},
			kind:    KindInterrupted,
			says:    "closed before the reply was finished.",
			content: "abcdefghij",
		},
	}
	srv := llmtest.NewServer(t)
	c := New(Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.Enqueue(tt.reply)
			s, err := c.Stream(context.Background(), Endpoint{BaseURL: srv.URL}, chat("m"))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			got, err := drain(s)
			checkSentence(t, err, tt.kind, tt.says)
			if got.content != tt.content {
				t.Fatalf("content kept = %q, want %q", got.content, tt.content)
			}
			if _, again := s.Next(); !errors.Is(again, err) {
				t.Fatalf("second Next = %v, want the same error", again)
			}
		})
	}
}

func TestStreamStatusErrors(t *testing.T) {
	tests := []struct {
		name   string
		reply  llmtest.Reply
		status int
		says   string
	}{
		{"400 with an error object", llmtest.Reply{Status: 400, ErrorMessage: "max_tokens is too large"}, 400, "answered 400 Bad Request: max_tokens is too large."},
		{"500 in vLLM's shape", llmtest.Reply{Status: 500, Body: `{"object":"error","message":"CUDA out of memory","type":"InternalServerError","code":500}`}, 500, "answered 500 Internal Server Error: CUDA out of memory."},
		{"404 for a missing model", llmtest.Reply{Status: 404, Body: `{"error":{"message":"model \"qwen\" not found, try pulling it first"}}`}, 404, `404 Not Found: model "qwen" not found, try pulling it first.`},
		{"429 rate limit", llmtest.Reply{Status: 429, ErrorMessage: "Rate limit reached"}, 429, "429 Too Many Requests: Rate limit reached."},
	}
	srv := llmtest.NewServer(t)
	c := New(Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.Enqueue(tt.reply)
			_, err := c.Stream(context.Background(), Endpoint{BaseURL: srv.URL}, chat("m"))
			e := checkSentence(t, err, KindStatus, tt.says)
			if e.Status != tt.status || !strings.HasSuffix(e.URL, "/v1/chat/completions") {
				t.Fatalf("status %d url %q", e.Status, e.URL)
			}
		})
	}
	t.Run("unscripted model", func(t *testing.T) {
		_, err := c.Stream(context.Background(), Endpoint{BaseURL: srv.URL}, chat("nobody"))
		checkSentence(t, err, KindStatus, `The model "nobody" does not exist.`)
	})
}

// Stop must close the upstream connection promptly: the fake observes the
// client going away.
func TestStreamCancelClosesUpstream(t *testing.T) {
	srv := llmtest.NewServer(t)
	c := New(Options{})

	t.Run("context cancelled during a stall", func(t *testing.T) {
		srv.Enqueue(llmtest.Reply{Content: "abcdefghij", Chunk: 2, StallAfter: 2})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s, err := c.Stream(ctx, Endpoint{BaseURL: srv.URL}, chat("m"))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		for range 2 {
			if _, err := s.Next(); err != nil {
				t.Fatal(err)
			}
		}
		before := srv.ClientsGone()
		time.AfterFunc(50*time.Millisecond, cancel)
		start := time.Now()
		_, err = s.Next()
		e := checkSentence(t, err, KindCanceled, "was cancelled.")
		if !errors.Is(e, context.Canceled) {
			t.Fatalf("cancellation not reachable with errors.Is: %v", e.Err)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Fatalf("Next took %v to notice", took)
		}
		wait(t, srv, before+1)
	})

	t.Run("Close from another goroutine", func(t *testing.T) {
		srv.Enqueue(llmtest.Reply{Content: "abcdefghij", Chunk: 2, StallAfter: 1})
		s, err := c.Stream(context.Background(), Endpoint{BaseURL: srv.URL}, chat("m"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Next(); err != nil {
			t.Fatal(err)
		}
		before := srv.ClientsGone()
		time.AfterFunc(50*time.Millisecond, func() { s.Close() })
		_, err = s.Next()
		e := checkSentence(t, err, KindCanceled)
		if !errors.Is(e, ErrClosed) {
			t.Fatalf("want ErrClosed inside, got %v", e.Err)
		}
		wait(t, srv, before+1)
	})

	t.Run("cancelled mid-flow", func(t *testing.T) {
		srv.Enqueue(llmtest.Reply{Content: strings.Repeat("word ", 2000), Chunk: 5, TokensPerSecond: 1000})
		ctx, cancel := context.WithCancel(context.Background())
		s, err := c.Stream(ctx, Endpoint{BaseURL: srv.URL}, chat("m"))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		before := srv.ClientsGone()
		for range 5 {
			if _, err := s.Next(); err != nil {
				t.Fatal(err)
			}
		}
		cancel()
		for {
			if _, err := s.Next(); err != nil {
				checkSentence(t, err, KindCanceled)
				break
			}
		}
		wait(t, srv, before+1)
	})
}

func wait(t *testing.T, srv *llmtest.Server, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.WaitClientsGone(ctx, n); err != nil {
		t.Fatalf("the server never saw the client go: %v", err)
	}
}

func TestStreamIdleTimeout(t *testing.T) {
	srv := llmtest.NewServer(t)
	c := New(Options{StreamIdleTimeout: 300 * time.Millisecond})

	t.Run("stalled after some chunks", func(t *testing.T) {
		srv.Enqueue(llmtest.Reply{Content: "abcdefghij", Chunk: 2, StallAfter: 3})
		s, err := c.Stream(context.Background(), Endpoint{BaseURL: srv.URL}, chat("m"))
		if err != nil {
			t.Fatal(err)
		}
		before := srv.ClientsGone()
		start := time.Now()
		got, err := drain(s)
		checkSentence(t, err, KindTimeout, "for 300 ms; stopped waiting.")
		if got.content != "abcdef" {
			t.Fatalf("content kept %q", got.content)
		}
		if took := time.Since(start); took > 300*time.Millisecond+2*time.Second {
			t.Fatalf("took %v", took)
		}
		wait(t, srv, before+1)
	})

	t.Run("never sends headers", func(t *testing.T) {
		srv.Enqueue(llmtest.Reply{Hang: true})
		_, err := c.Stream(context.Background(), Endpoint{BaseURL: srv.URL}, chat("m"))
		checkSentence(t, err, KindTimeout, "No answer from ")
	})

	t.Run("slow but never idle", func(t *testing.T) {
		// Deltas 100 ms apart against a 300 ms limit: slow, never idle.
		srv.Enqueue(llmtest.Reply{Content: "abcdefgh", Chunk: 2, TokensPerSecond: 10, Delay: 200 * time.Millisecond})
		s, err := c.Stream(context.Background(), Endpoint{BaseURL: srv.URL}, chat("m"))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := drain(s); err != nil || got.content != "abcdefgh" {
			t.Fatalf("%q %v", got.content, err)
		}
	})
}

func TestStreamLineLimit(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Default(llmtest.Reply{Content: strings.Repeat("x", 4096), Chunk: 4096})
	s, err := New(Options{MaxLineBytes: 1024}).Stream(context.Background(), Endpoint{BaseURL: srv.URL}, chat("m"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = drain(s)
	checkSentence(t, err, KindBadResponse, "longer than the limit")
}

func TestStreamRawFraming(t *testing.T) {
	chunk := func(content string) string {
		return `{"choices":[{"index":0,"delta":{"content":"` + content + `"}}]}`
	}
	finish := `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`
	tests := []struct {
		name    string
		raw     string
		content string
		kind    ErrorKind // 0: a clean end
	}{
		{"comments and an id", ": hello\nid: 1\nretry: 100\ndata: " + chunk("a") + "\n\n: ping\n\ndata: " + finish + "\n\ndata: [DONE]\n\n", "a", 0},
		{"byte order mark", "\xEF\xBB\xBFdata: " + chunk("a") + "\n\ndata: " + finish + "\n\n", "a", 0},
		{"lone CR endings", "data: " + chunk("a") + "\r\rdata: " + finish + "\r\r", "a", 0},
		{"last event without a blank line", "data: " + chunk("a") + "\n\ndata: " + finish, "a", 0},
		{"[DONE] with spaces", "data: " + chunk("a") + "\n\ndata:  [DONE] \n\n", "a", 0},
		{"empty data is skipped", "data:\n\ndata: " + chunk("a") + "\n\ndata: " + finish + "\n\n", "a", 0},
		{"pretty-printed across data lines", "data: {\"choices\":\ndata: [{\"index\":0,\"delta\":{\"content\":\"a\"},\ndata: \"finish_reason\":\"stop\"}]}\n\n", "a", 0},
		{"a second choice is not ours", `data: {"choices":[{"index":1,"delta":{"content":"b"}},{"index":0,"delta":{"content":"a"}}]}` + "\n\ndata: " + finish + "\n\n", "a", 0},
		{"content as parts (Mistral)", `data: {"choices":[{"index":0,"delta":{"content":[{"type":"thinking","thinking":[{"type":"text","text":"hm"}]},{"type":"text","text":"a"}]}}]}` + "\n\ndata: " + finish + "\n\n", "a", 0},
		{"null content and odd types", `data: {"choices":[{"index":"0","delta":{"content":null,"reasoning":7}}],"usage":null}` + "\n\ndata: " + chunk("a") + "\n\ndata: " + finish + "\n\n", "a", 0},
		{"error: null on every chunk", `data: {"error":null,"choices":[{"index":0,"delta":{"content":"a"}}]}` + "\n\ndata: {\"error\":\"\"," + finish[1:] + "\n\n", "a", 0},
		{"not JSON", "data: " + chunk("a") + "\n\ndata: hello there\n\n", "a", KindBadResponse},
		{"cut inside the last line", "data: " + chunk("a") + "\n\ndata: {\"choi", "a", KindInterrupted},
		{"nothing but a comment", ": hello\n", "", KindInterrupted},
	}
	srv := llmtest.NewServer(t)
	c := New(Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.Enqueue(llmtest.Reply{Raw: tt.raw})
			s, err := c.Stream(context.Background(), Endpoint{BaseURL: srv.URL}, chat("m"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := drain(s)
			if tt.kind == 0 && err != nil {
				t.Fatal(err)
			}
			if tt.kind != 0 {
				checkSentence(t, err, tt.kind)
			}
			if got.content != tt.content {
				t.Fatalf("content %q, want %q", got.content, tt.content)
			}
		})
	}
}

// A server that ignores stream:true and answers in one piece is read as a
// one-chunk stream.
func TestStreamAnsweredInOnePiece(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		fmt.Fprint(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"<think>hm</think>Hi","tool_calls":[{"id":"c1","type":"function","function":{"name":"now","arguments":""}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`)
	}))
	defer ts.Close()
	s, err := New(Options{}).Stream(context.Background(), Endpoint{BaseURL: ts.URL}, chat("m"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := drain(s)
	want := result{content: "Hi", reasoning: "hm", calls: []ToolCall{{ID: "c1", Name: "now", Arguments: "{}"}},
		finish: "tool_calls", usage: &Usage{PromptTokens: 3, CompletionTokens: 2, TotalTokens: 5}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v (%v), want %+v", got, err, want)
	}
}

// Many streams at once share one Client and one fake, under -race.
func TestStreamsConcurrently(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Default(llmtest.Reply{Content: answer, Reasoning: thought, ThinkInline: true, Chunk: 3, Usage: true, TokensPerSecond: 2000})
	c := New(Options{})
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		wg.Go(func() {
			s, err := c.Stream(context.Background(), Endpoint{BaseURL: srv.URL}, chat(fmt.Sprint("m", i)))
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			got, err := drain(s)
			if err == nil && (got.content != answer || got.reasoning != thought) {
				err = fmt.Errorf("got %q / %q", got.content, got.reasoning)
			}
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := len(srv.Requests()); n != 20 {
		t.Fatalf("server saw %d requests", n)
	}
}

// A finished stream leaves its connection to be reused.
func TestStreamConnectionReused(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Default(llmtest.Reply{Content: answer, Usage: true})
	c := New(Options{})
	var reused []bool
	for range 3 {
		ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
			GotConn: func(info httptrace.GotConnInfo) { reused = append(reused, info.Reused) },
		})
		s, err := c.Stream(ctx, Endpoint{BaseURL: srv.URL}, chat("m"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := drain(s); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	if !reflect.DeepEqual(reused, []bool{false, true, true}) {
		t.Fatalf("connections reused: %v", reused)
	}
}
