package llm

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"lembas/internal/llm/llmtest"
)

func yes() *bool { return ptr(true) }
func no() *bool  { return ptr(false) }

func TestListModelsShapes(t *testing.T) {
	specs := []llmtest.ModelSpec{
		{ID: "qwen3-4b", ContextLength: 8192, TrainContext: 262144, Vision: true, Tools: true, Reasoning: true,
			PromptPrice: "0.0000002", CompletionPrice: "0.0000008", Description: "A small model.", Name: "Qwen: Qwen3 4B"},
		// The name says embedding; nothing else does, so nothing is guessed.
		{ID: "nomic-embed-text", TrainContext: 8192},
	}
	tests := []struct {
		shape llmtest.Shape
		want  []Model
	}{
		{llmtest.ShapeOpenAI, []Model{
			{ID: "qwen3-4b", OwnedBy: "openai"},
			{ID: "nomic-embed-text", OwnedBy: "openai"},
		}},
		{llmtest.ShapeOllama, []Model{
			{ID: "qwen3-4b", OwnedBy: "library"},
			{ID: "nomic-embed-text", OwnedBy: "library"},
		}},
		// n_ctx is what is served; n_ctx_train (262144) must not leak
		// in. "multimodal" in models[] states vision; "completion" states
		// nothing.
		{llmtest.ShapeLlamaCpp, []Model{
			{ID: "qwen3-4b", OwnedBy: "llamacpp", ContextLength: 8192, Vision: yes()},
			{ID: "nomic-embed-text", OwnedBy: "llamacpp"},
		}},
		{llmtest.ShapeLlamaCppLegacy, []Model{
			{ID: "qwen3-4b", OwnedBy: "llamacpp"},
			{ID: "nomic-embed-text", OwnedBy: "llamacpp"},
		}},
		{llmtest.ShapeVLLM, []Model{
			{ID: "qwen3-4b", OwnedBy: "vllm", ContextLength: 8192},
			{ID: "nomic-embed-text", OwnedBy: "vllm"},
		}},
		{llmtest.ShapeOpenRouter, []Model{
			{ID: "qwen3-4b", Name: "Qwen: Qwen3 4B", ContextLength: 8192, PromptPrice: "0.0000002",
				CompletionPrice: "0.0000008", Description: "A small model.",
				Vision: yes(), Tools: yes(), Reasoning: yes(), Embedding: no()},
			{ID: "nomic-embed-text", Vision: no(), Tools: no(), Reasoning: no(), Embedding: no()},
		}},
		{llmtest.ShapeLMStudio, []Model{
			{ID: "qwen3-4b", OwnedBy: "organization_owner"},
			{ID: "nomic-embed-text", OwnedBy: "organization_owner"},
		}},
		{llmtest.ShapeBareArray, []Model{
			{ID: "qwen3-4b", OwnedBy: "local"},
			{ID: "nomic-embed-text", OwnedBy: "local"},
		}},
	}
	srv := llmtest.NewServer(t)
	c := New(Options{})
	for _, tt := range tests {
		t.Run(shapeName(tt.shape), func(t *testing.T) {
			srv.SetModels(tt.shape, specs...)
			got, err := c.ListModels(context.Background(), Endpoint{BaseURL: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %s\nwant %s", describe(got), describe(tt.want))
			}
		})
	}
}

func shapeName(s llmtest.Shape) string {
	return [...]string{"openai", "ollama", "llamacpp", "llamacpp-legacy", "vllm", "openrouter", "lmstudio", "bare-array"}[s]
}

func describe(ms []Model) string {
	var b strings.Builder
	for _, m := range ms {
		b.WriteString("{" + m.ID + " name=" + m.Name + " owner=" + m.OwnedBy + " ctx=" + strconv.Itoa(m.ContextLength) +
			" price=" + m.PromptPrice + "/" + m.CompletionPrice + " desc=" + m.Description +
			" vision=" + tri(m.Vision) + " tools=" + tri(m.Tools) + " reasoning=" + tri(m.Reasoning) +
			" embedding=" + tri(m.Embedding) + "} ")
	}
	return b.String()
}

func tri(b *bool) string {
	if b == nil {
		return "?"
	}
	if *b {
		return "yes"
	}
	return "no"
}

// Bodies straight from the servers' documentation of their shapes, for
// the edges the fake does not render.
func TestParseModelsEdges(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []Model
		said string
		bad  bool
	}{
		{"empty data", `{"object":"list","data":[]}`, []Model{}, "", false},
		{"null data", `{"object":"list","data":null,"models":null}`, []Model{}, "", false},
		{"array of names", `["a","b"]`, []Model{{ID: "a"}, {ID: "b"}}, "", false},
		{"duplicates merge", `{"data":[{"id":"a"},{"id":"a","context_length":4096}]}`, []Model{{ID: "a", ContextLength: 4096}}, "", false},
		{"numbers as strings", `{"data":[{"id":"a","max_model_len":"32768"}]}`, []Model{{ID: "a", ContextLength: 32768}}, "", false},
		{"wrong type keeps the rest", `{"data":[{"id":"a","owned_by":{"x":1},"max_model_len":2048}]}`, []Model{{ID: "a", ContextLength: 2048}}, "", false},
		{"groq context_window", `{"data":[{"id":"a","context_window":131072}]}`, []Model{{ID: "a", ContextLength: 131072}}, "", false},
		{"only n_ctx_train", `{"data":[{"id":"a","meta":{"n_ctx_train":131072}}]}`, []Model{{ID: "a"}}, "", false},
		{"lm studio native types", `{"data":[{"id":"v","type":"vlm","max_context_length":4096},{"id":"e","type":"embeddings"}]}`,
			[]Model{{ID: "v", Vision: yes(), ContextLength: 4096}, {ID: "e", Embedding: yes()}}, "", false},
		{"ollama-style capabilities", `{"models":[{"name":"q","model":"q","capabilities":["completion","tools","thinking","vision"]}]}`,
			[]Model{{ID: "q", Tools: yes(), Reasoning: yes(), Vision: yes()}}, "", false},
		{"entry without id skipped", `{"data":[{"object":"model"},{"id":"b"}]}`, []Model{{ID: "b"}}, "", false},
		{"error object", `{"error":{"message":"Invalid API key"}}`, nil, "Invalid API key", false},
		{"not a list", `{"object":"list"}`, nil, "", true},
		{"not json", `<html>hi</html>`, nil, "", true},
		{"empty", ``, nil, "", true},
		{"bom", "\xEF\xBB\xBF{\"data\":[{\"id\":\"a\"}]}", []Model{{ID: "a"}}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, said, err := parseModels([]byte(tt.body))
			if (err != nil) != tt.bad {
				t.Fatalf("err = %v, want bad=%v", err, tt.bad)
			}
			if said != tt.said {
				t.Fatalf("said = %q, want %q", said, tt.said)
			}
			if !tt.bad && tt.said == "" && !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %s\nwant %s", describe(got), describe(tt.want))
			}
		})
	}
}

// Every error sentence must be one a person can act on, free of Go's own
// wording.
func checkSentence(t *testing.T, err error, kind ErrorKind, wantIn ...string) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *Error", err, err)
	}
	if e.Kind != kind {
		t.Fatalf("kind = %v, want %v; message %q", e.Kind, kind, e.Message)
	}
	msg := e.Error()
	for _, w := range wantIn {
		if !strings.Contains(msg, w) {
			t.Fatalf("message %q does not contain %q", msg, w)
		}
	}
	for _, bad := range []string{"dial tcp", "dial ", "tcp ", "EOF", "context deadline", "x509:", "tls:", "http: ", "goroutine", "%!"} {
		if strings.Contains(msg, bad) {
			t.Fatalf("message %q contains Go wording %q", msg, bad)
		}
	}
	if !strings.ContainsAny(msg[len(msg)-1:], ".!?") && !strings.HasSuffix(msg, "…") {
		t.Fatalf("message %q is not a sentence", msg)
	}
	return e
}

func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestListModelsErrors(t *testing.T) {
	ctx := context.Background()
	c := New(Options{})

	t.Run("connection refused", func(t *testing.T) {
		addr := closedPort(t)
		_, err := c.ListModels(ctx, Endpoint{BaseURL: "http://" + addr + "/v1"})
		checkSentence(t, err, KindConnect, "Could not connect to http://"+addr+": connection refused.")
	})

	t.Run("accepts and never answers", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		srv.SetHang(true)
		start := time.Now()
		_, err := c.ListModels(ctx, Endpoint{BaseURL: srv.URL, Timeout: 500 * time.Millisecond})
		if took := time.Since(start); took > 500*time.Millisecond+2*time.Second {
			t.Fatalf("took %v", took)
		}
		checkSentence(t, err, KindTimeout, "No answer from ", "within 500 ms.")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("the deadline is not reachable with errors.Is: %v", errors.Unwrap(err))
		}
	})

	t.Run("caller cancels", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		srv.SetHang(true)
		short, cancel := context.WithCancel(ctx)
		cancel()
		_, err := c.ListModels(short, Endpoint{BaseURL: srv.URL})
		checkSentence(t, err, KindCanceled, "cancelled")
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancellation not reachable with errors.Is: %v", err)
		}
	})

	t.Run("401 with an OpenAI error body", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		srv.RequireKey("sk-right")
		_, err := c.ListModels(ctx, Endpoint{BaseURL: srv.URL, APIKey: "sk-wrong"})
		e := checkSentence(t, err, KindStatus, "answered 401 Unauthorized", "check the API key", "Incorrect API key provided.")
		if e.Status != 401 || e.Body != "Incorrect API key provided." {
			t.Fatalf("status %d body %q", e.Status, e.Body)
		}
	})

	t.Run("key echoed by the server is scrubbed", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		srv.SetModelsBody(401, "application/json", `{"error":{"message":"Incorrect API key provided: sk-secret-123."}}`)
		_, err := c.ListModels(ctx, Endpoint{BaseURL: srv.URL, APIKey: "sk-secret-123"})
		e := checkSentence(t, err, KindStatus)
		if strings.Contains(e.Message, "sk-secret-123") || strings.Contains(e.Body, "sk-secret-123") {
			t.Fatalf("key leaked: %q / %q", e.Message, e.Body)
		}
	})

	t.Run("404 html page", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		srv.SetModelsBody(404, "text/html", "<html><head><title>404 Not Found</title></head><body><h1>Not Found</h1></body></html>")
		_, err := c.ListModels(ctx, Endpoint{BaseURL: srv.URL})
		checkSentence(t, err, KindStatus, "answered 404 Not Found (check the address; it usually ends in /v1): 404 Not Found.")
	})

	t.Run("502 with plain text", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		srv.SetModelsBody(502, "text/plain", "upstream\n\n   connect error   "+strings.Repeat("x", 400))
		_, err := c.ListModels(ctx, Endpoint{BaseURL: srv.URL})
		e := checkSentence(t, err, KindStatus, "answered 502 Bad Gateway: upstream connect error xxx")
		if n := len([]rune(e.Body)); n > excerptLimit+1 {
			t.Fatalf("excerpt has %d runes", n)
		}
	})

	t.Run("body that is not JSON", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		srv.SetModelsBody(200, "text/html", "<!doctype html><html><body>Welcome to nginx!</body></html>")
		_, err := c.ListModels(ctx, Endpoint{BaseURL: srv.URL})
		checkSentence(t, err, KindBadResponse, "did not answer with a model list; it sent: Welcome to nginx!")
	})

	t.Run("200 carrying an error object", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		srv.SetModelsBody(200, "application/json", `{"error":"model store unavailable"}`)
		_, err := c.ListModels(ctx, Endpoint{BaseURL: srv.URL})
		checkSentence(t, err, KindUpstream, "reported an error: model store unavailable.")
	})

	t.Run("unusable address", func(t *testing.T) {
		for _, base := range []string{"localhost:11434/v1", "ftp://user:hunter2@host/v1", "", "http://"} {
			_, err := c.ListModels(ctx, Endpoint{BaseURL: base})
			e := checkSentence(t, err, KindInvalid, "should look like http://localhost:11434/v1")
			if strings.Contains(e.Message, "hunter2") || strings.Contains(e.Err.Error(), "hunter2") {
				t.Fatalf("password repeated: %q", e.Message)
			}
		}
	})

	t.Run("name that does not resolve", func(t *testing.T) {
		_, err := c.ListModels(ctx, Endpoint{BaseURL: "http://lembas-no-such-host.invalid/v1", Timeout: 5 * time.Second})
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("got %v", err)
		}
		// Without a resolver at all the lookup can also time out; either
		// way the sentence must be about the name.
		if e.Kind != KindDNS && e.Kind != KindTimeout {
			t.Fatalf("kind %v: %q", e.Kind, e.Message)
		}
		checkSentence(t, err, e.Kind)
	})

	t.Run("untrusted certificate", func(t *testing.T) {
		ts := httptest.NewUnstartedServer(http.NotFoundHandler())
		ts.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is the point
		ts.StartTLS()
		defer ts.Close()
		_, err := c.ListModels(ctx, Endpoint{BaseURL: ts.URL + "/v1"})
		checkSentence(t, err, KindTLS, "Could not connect securely to "+ts.URL+": its certificate is signed by an authority")
	})

	t.Run("https to a plain server", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		base := strings.Replace(srv.URL, "http://", "https://", 1)
		_, err := c.ListModels(ctx, Endpoint{BaseURL: base})
		checkSentence(t, err, KindTLS, "try http:// instead of https://")
	})

	t.Run("key and extra headers are sent", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		srv.SetModels(llmtest.ShapeOpenAI, llmtest.ModelSpec{ID: "m"})
		_, err := c.ListModels(ctx, Endpoint{BaseURL: srv.URL + "/", APIKey: "sk-1", Headers: map[string]string{"HTTP-Referer": "https://lembas.test"}})
		if err != nil {
			t.Fatal(err)
		}
		r := srv.LastRequest()
		if r.Method != "GET" || r.Path != "/v1/models" || r.Header.Get("Authorization") != "Bearer sk-1" ||
			r.Header.Get("HTTP-Referer") != "https://lembas.test" {
			t.Fatalf("request %s %s %v", r.Method, r.Path, r.Header)
		}
	})

	t.Run("no key, no authorization header", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		if _, err := c.ListModels(ctx, Endpoint{BaseURL: srv.URL}); err != nil {
			t.Fatal(err)
		}
		if _, ok := srv.LastRequest().Header["Authorization"]; ok {
			t.Fatal("an empty key was sent")
		}
	})
}

func TestServerSays(t *testing.T) {
	tests := []struct{ body, want string }{
		{`{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}`, "Incorrect API key provided"},
		{`{"error":"model 'x' not found"}`, "model 'x' not found"},
		{`{"detail":"Not Found"}`, "Not Found"},
		{`{"detail":[{"loc":["body","model"],"msg":"field required","type":"missing"}]}`, "field required"},
		{`{"object":"error","message":"This model's maximum context length is 4096 tokens.","type":"BadRequestError","code":400}`, "This model's maximum context length is 4096 tokens."},
		{`{"error":{"code":402,"message":"Insufficient credits","metadata":{}}}`, "Insufficient credits"},
		{"  plain\n\ttext  ", "plain text"},
		{`<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>`, "502 Bad Gateway"},
		{`<html><body><p>Service <b>down</b></p></html>`, "Service down"},
		{"", ""},
		{"\xff\xfe bad utf8", "� bad utf8"},
	}
	for _, tt := range tests {
		if got := serverSays([]byte(tt.body)); got != tt.want {
			t.Errorf("serverSays(%q) = %q, want %q", tt.body, got, tt.want)
		}
	}
	long := serverSays([]byte(strings.Repeat("é", 500)))
	if n := len([]rune(long)); n != excerptLimit+1 || !strings.HasSuffix(long, "…") {
		t.Errorf("long excerpt: %d runes, %q", n, long[len(long)-8:])
	}
}

func TestHumanDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{10 * time.Second, "10 s"},
		{1500 * time.Millisecond, "1.5 s"},
		{500 * time.Millisecond, "500 ms"},
		{5 * time.Minute, "5 min"},
		{90 * time.Second, "90 s"},
		{0, "0 s"},
	}
	for _, tt := range tests {
		if got := humanDuration(tt.d); got != tt.want {
			t.Errorf("humanDuration(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}
