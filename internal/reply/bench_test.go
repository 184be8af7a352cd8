package reply

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"lembas/internal/chat"
	"lembas/internal/llm/llmtest"
	"lembas/internal/render"
)

// The engine's cost to write one reply, end to end: the request, the
// streamed deltas through the llm client, the think splitter, the state
// and its version counter, a follower that takes a Snapshot on every
// change it wakes for (so the live HTML is rendered each time, by the real
// render.Stream), the periodic partial writes, the final render and the
// stored row. The fake upstream sends the whole stream in one write (a
// pre-built body), so its own cost is not in the figure.
//
// DESIGN.md's target: a 20,000-token reply costs less than 15× the CPU of
// a 2,000-token one (10× is linear). Compare cpu-ns/op of the two, or
// cpu-ns/token, which stays flat when the engine is linear.
//
//	go test ./internal/reply -run '^$' -bench 'Reply(2|20)k$' -benchtime 10x -count 3

func BenchmarkReply2k(b *testing.B)  { benchmarkReply(b, 2_000) }
func BenchmarkReply20k(b *testing.B) { benchmarkReply(b, 20_000) }

func benchmarkReply(b *testing.B, tokens int) {
	w := newWorld(b, func(d *Deps) {
		d.NewRenderer = func() Renderer { return new(render.Stream) }
		d.RenderMarkdown = render.Markdown
		d.PersistEvery = 3 * time.Second
	})
	pieces := benchDeltas(tokens)
	want := strings.Join(pieces, "")
	w.up.Default(llmtest.Reply{Raw: benchStream(pieces)})
	ctx := context.Background()

	var snaps, frames, htmlBytes int
	var cpu time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		st, err := w.chats.Start(ctx, w.user.ID, "Explain the build, step by step.", chat.Seed{ModelID: w.model, ModelName: w.name})
		if err != nil {
			b.Fatal(err)
		}
		// A chat with a title of its own asks for no title afterwards: the
		// figure is the reply's alone.
		if _, err := w.chats.Rename(ctx, w.user.ID, st.Chat.ID, "Benchmark"); err != nil {
			b.Fatal(err)
		}
		before := benchCPU()
		b.StartTimer()

		g, err := w.reg.Ensure(ctx, st.Assistant.ID)
		if err != nil || g == nil {
			b.Fatalf("ensure: %v", err)
		}
		var last Snapshot
		var lastHTML string
		for {
			changed := g.Changed()
			last = g.Snapshot()
			snaps++
			htmlBytes += len(last.HTML)
			if last.HTML != lastHTML {
				frames++
				lastHTML = last.HTML
			}
			if last.Done {
				break
			}
			<-changed
		}
		// Done is set after the row is stored; the generation's goroutine
		// has nothing left but to return.
		w.reg.Wait()

		b.StopTimer()
		cpu += benchCPU() - before
		if last.Status != chat.StatusDone || last.Content != want {
			b.Fatalf("reply ended %s with %d of %d bytes (%s)", last.Status, len(last.Content), len(want), last.Error)
		}
		b.StartTimer()
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n/float64(tokens), "ns/token")
	b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/op")
	b.ReportMetric(float64(cpu.Nanoseconds())/n/float64(tokens), "cpu-ns/token")
	b.ReportMetric(float64(snaps)/n, "snapshots/op")
	b.ReportMetric(float64(frames)/n, "htmlchanges/op")
	// The live HTML is whole (frames carry whole blocks), so what the
	// snapshots hand out grows with the square of the reply's length.
	b.ReportMetric(float64(htmlBytes)/n/1e6, "snapshot-MB/op")
}

// benchCPU is the process's user and system CPU so far.
func benchCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchDeltas is a model-like Markdown reply cut into exactly n deltas of
// about four bytes (a token): prose with inline code and links, headings,
// lists, tables and fenced code in a few languages, each section
// different.
func benchDeltas(n int) []string {
	var src strings.Builder
	for i := 0; src.Len() < n*4+64; i++ {
		fmt.Fprintf(&src, "## Part %d: what happens next\n\n", i+1)
		fmt.Fprintf(&src, "The %dth step reads the configuration, checks `limit_%d` against the "+
			"[documented range](https://example.test/docs/%d) and only then *writes* anything. "+
			"If the check fails it says why in **one sentence**, so nobody has to read a trace.\n\n", i+1, i, i)
		fmt.Fprintf(&src, "1. open the file for item %d\n2. parse it, keeping line numbers\n3. report the first error only\n\n", i)
		switch i % 4 {
		case 0:
			fmt.Fprintf(&src, "```go\nfunc part%d(ctx context.Context, in []byte) (int, error) {\n"+
				"\tn := 0\n\tfor _, b := range in {\n\t\tif b == '\\n' {\n\t\t\tn++ // count lines\n\t\t}\n\t}\n"+
				"\treturn n + %d, ctx.Err()\n}\n```\n\n", i, i)
		case 1:
			fmt.Fprintf(&src, "```python\ndef part_%d(rows):\n    \"\"\"Sum the second column.\"\"\"\n"+
				"    return sum(int(r[1]) for r in rows if r)  # %d rows at most\n```\n\n", i, i*10)
		case 2:
			fmt.Fprintf(&src, "| setting | value | why |\n|---|--:|---|\n| workers | %d | one per core |\n| retries | %d | enough |\n\n", i%8+1, i%5)
		case 3:
			fmt.Fprintf(&src, "> Note: step %d can be skipped when nothing changed since the last run.\n\n", i+1)
		}
	}
	s := src.String()
	out := make([]string, n)
	for k := range out {
		out[k] = s[4*k : 4*k+4]
	}
	return out
}

// benchStream is the streamed body a server sends for these deltas: a
// role chunk, one chunk per delta with the usual envelope, a finish and a
// usage chunk, then [DONE].
func benchStream(pieces []string) string {
	var b bytes.Buffer
	type m = map[string]any
	write := func(v any) {
		j, _ := json.Marshal(v)
		b.WriteString("data: ")
		b.Write(j)
		b.WriteString("\n\n")
	}
	chunk := func(delta m, finish any) m {
		return m{"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1735689600, "model": "fake-model",
			"choices": []any{m{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	write(chunk(m{"role": "assistant", "content": ""}, nil))
	for _, p := range pieces {
		write(chunk(m{"content": p}, nil))
	}
	write(chunk(m{}, "stop"))
	write(m{"id": "chatcmpl-bench", "object": "chat.completion.chunk", "choices": []any{},
		"usage": m{"prompt_tokens": 20, "completion_tokens": len(pieces), "total_tokens": 20 + len(pieces)}})
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}
