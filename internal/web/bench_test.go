package web

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"lembas/internal/chat"
	"lembas/internal/llm/llmtest"
	"lembas/internal/render"
)

// The server render of a long chat: GET /chat/{id} through the whole
// handler chain (session, guards, the chat and its messages from SQLite,
// every bubble, the layout) for a signed-in person, over loopback HTTP.
// The chat has 1,000 stored messages: 500 exchanges whose replies are
// model-like Markdown with their stored HTML, as a finished reply keeps it.
//
// DESIGN.md's target: p50 < 50 ms.
//
//	go test ./internal/web -run '^$' -bench 'ChatPage1000' -benchtime 100x
func BenchmarkChatPage1000Messages(b *testing.B) { benchmarkChatPage(b, false) }

// BenchmarkChatPage1000MessagesReasoning is the same chat written by a
// model that thinks: every reply also keeps its reasoning, which the page
// renders from Markdown on each view (there is no stored HTML for it).
func BenchmarkChatPage1000MessagesReasoning(b *testing.B) { benchmarkChatPage(b, true) }

func benchmarkChatPage(b *testing.B, reasoning bool) {
	site := newSite(b)
	br := site.browser()
	br.register("admin")
	c := br.c
	uid := userID(b, site, "admin")
	_, modelID := site.fakeConnection(b, "Fake", llmtest.ModelSpec{ID: "qwen3-30b-a3b", ContextLength: 32768})
	chatID, lastReply := site.longChat(uid, modelID, 500, reasoning)
	path := "/chat/" + chatID

	var size int
	get := func() {
		res, err := c.Get(site.URL + path)
		if err != nil {
			b.Fatal(err)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK {
			b.Fatalf("GET %s: %d %v", path, res.StatusCode, err)
		}
		size = len(body)
		if !strings.Contains(string(body), lastReply) {
			b.Fatal("the page is missing the last reply")
		}
	}
	get() // warm: templates, statement cache, connections

	var took []time.Duration
	b.ReportAllocs()
	cpu0 := benchCPU()
	for b.Loop() {
		start := time.Now()
		get()
		took = append(took, time.Since(start))
	}
	cpu := benchCPU() - cpu0
	slices.Sort(took)
	// The process's CPU per page, the client's reading included: unlike
	// the wall-clock percentiles it does not grow when other processes
	// share the machine.
	b.ReportMetric(benchMS(cpu)/float64(len(took)), "cpu-ms/op")
	b.ReportMetric(benchMS(benchQuantile(took, 0.50)), "p50-ms")
	b.ReportMetric(benchMS(benchQuantile(took, 0.99)), "p99-ms")
	b.ReportMetric(float64(size)/1e3, "page-kB")
}

// benchCPU is the process's user and system CPU so far.
func benchCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchMS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// benchQuantile is the quantile of sorted durations, nearest rank.
func benchQuantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// longChat writes a chat of n finished exchanges, as the engine leaves
// them: content, stored HTML, metrics, and reasoning when asked. It
// returns the chat's id and a phrase only the last reply contains.
func (s *testSite) longChat(userID, modelID string, n int, reasoning bool) (chatID, last string) {
	ctx := context.Background()
	const name = "qwen3-30b-a3b"
	var assistant string
	for i := range n {
		prompt := benchPrompt(i)
		if i == 0 {
			st, err := s.chats.Start(ctx, userID, prompt, chat.Seed{ModelID: modelID, ModelName: name})
			if err != nil {
				s.t.Fatal(err)
			}
			chatID, assistant = st.Chat.ID, st.Assistant.ID
		} else {
			sent, err := s.chats.Send(ctx, userID, chatID, prompt, name)
			if err != nil || sent.Queued {
				s.t.Fatalf("send %d: %v (queued %v)", i, err, sent.Queued)
			}
			assistant = sent.Assistant.ID
		}
		content := benchReply(i)
		in, out, ctxTok := 900+40*i, len(content)/4, 900+40*i+len(content)/4
		ttft, dur := int64(300+i%700), int64(4000+7*i%9000)
		f := chat.Final{Content: content, HTML: render.Markdown(content), Status: chat.StatusDone,
			Metrics: chat.Metrics{PromptTokens: &in, CompletionTokens: &out, ContextTokens: &ctxTok,
				ContextLength: 32768, TTFT: &ttft, Duration: &dur}}
		if reasoning {
			f.Reasoning = benchReasoning(i)
			f.ReasoningMS = int64(2000 + 13*i%8000)
		}
		if ok, err := s.chats.Finish(ctx, assistant, f); err != nil || !ok {
			s.t.Fatalf("finish %d: %v", i, err)
		}
	}
	return chatID, fmt.Sprintf("the %dth step", n)
}

func benchPrompt(i int) string {
	prompts := []string{
		"Can you explain how the build works, step by step?",
		"Why does the second test fail only on CI? Here is the log:\n\n    FAIL: TestQueue (0.03s)\n    queue_test.go:41: got 2 items, want 3",
		"Rewrite that function so it does not allocate in the loop.",
		"What is the difference between a mutex and a channel here?",
		"Give me a table of the settings and what each one does.",
	}
	return fmt.Sprintf("%s (%d)", prompts[i%len(prompts)], i)
}

// benchReply is a model-like reply of a few hundred tokens: a heading,
// prose with inline code and a link, a list, and in turn a code block, a
// table or a quote. The last one's text ends with "the Nth step".
func benchReply(i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Part %d\n\n", i+1)
	fmt.Fprintf(&b, "Here is what happens. The runner reads `config_%d.toml`, checks every value against the "+
		"[documented ranges](https://example.test/docs/%d) and only then *writes* anything. When a check "+
		"fails it says why in **one sentence**, so nobody has to read a stack trace to find a typo.\n\n", i, i)
	fmt.Fprintf(&b, "1. open the file for item %d\n2. parse it, keeping line numbers\n3. report the first error only\n4. exit with status %d\n\n", i, i%3)
	switch i % 4 {
	case 0:
		fmt.Fprintf(&b, "```go\nfunc part%d(ctx context.Context, in []byte) (int, error) {\n"+
			"\tn := 0\n\tfor _, c := range in {\n\t\tif c == '\\n' {\n\t\t\tn++ // count lines\n\t\t}\n\t}\n"+
			"\treturn n + %d, ctx.Err()\n}\n```\n\n", i, i)
	case 1:
		fmt.Fprintf(&b, "```python\ndef part_%d(rows):\n    \"\"\"Sum the second column.\"\"\"\n"+
			"    return sum(int(r[1]) for r in rows if r)  # at most %d rows\n```\n\n", i, i*10)
	case 2:
		fmt.Fprintf(&b, "| setting | value | why |\n|---|--:|---|\n| workers | %d | one per core |\n| retries | %d | enough |\n| timeout | %ds | generous |\n\n", i%8+1, i%5, 10+i%50)
	case 3:
		fmt.Fprintf(&b, "> Note: this can be skipped when nothing changed since the last run (%d).\n\n", i)
	}
	fmt.Fprintf(&b, "That is the %dth step; the next one builds on it.", i+1)
	return b.String()
}

func benchReasoning(i int) string {
	return fmt.Sprintf("The person asks about part %d. First I should recall what the runner does with its "+
		"configuration: it reads the file, validates it, and writes nothing until the checks pass.\n\n"+
		"- Is `config_%d.toml` the right name? It was mentioned earlier.\n- The error path matters more than the happy path.\n\n"+
		"I will answer with a short explanation, a list of the steps and an example.", i, i)
}
