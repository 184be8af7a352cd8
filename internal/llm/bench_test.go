package llm

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// streamBytes is a reply of n tokens as a server sends it: a role chunk,
// one delta per token with the usual envelope, a finish, a usage chunk,
// [DONE].
func streamBytes(n int) []byte {
	var b bytes.Buffer
	words := []string{"The", " fox", " jumps", " over", " the", " lazy", " dog", ",", " and", " \"quotes\"", "\n", " é"}
	write := func(v any) {
		j, _ := json.Marshal(v)
		b.WriteString("data: ")
		b.Write(j)
		b.WriteString("\n\n")
	}
	type m = map[string]any
	chunk := func(delta m, finish any) m {
		return m{"id": "chatcmpl-9f8e7d6c5b4a", "object": "chat.completion.chunk", "created": 1735689600,
			"model": "qwen3-30b-a3b", "system_fingerprint": "b6000-abcdef",
			"choices": []any{m{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}}
	}
	write(chunk(m{"role": "assistant", "content": ""}, nil))
	for i := range n {
		write(chunk(m{"content": words[i%len(words)]}, nil))
	}
	write(chunk(m{}, "stop"))
	write(m{"id": "chatcmpl-9f8e7d6c5b4a", "object": "chat.completion.chunk", "choices": []any{},
		"usage": m{"prompt_tokens": 1200, "completion_tokens": n, "total_tokens": 1200 + n}})
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

func BenchmarkDecodeStream(b *testing.B) {
	const tokens = 20000
	data := streamBytes(tokens)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		s := decodeStream(bytes.NewReader(data), DefaultMaxLineBytes)
		var n int
		for {
			c, err := s.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if c.Content != "" {
				n++
			}
		}
		if n != tokens {
			b.Fatalf("decoded %d tokens", n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/tokens, "ns/token")
}

func BenchmarkThinkSplitter(b *testing.B) {
	// A 20,000-token reply that thinks for the first quarter, cut into
	// token-sized deltas, tags split across them.
	text := "<think>" + strings.Repeat("Hmm, < maybe ", 2500) + "</think>" + strings.Repeat("The <b>fox</b> runs. ", 3750)
	var chunks []string
	for i := 0; i < len(text); i += 4 {
		chunks = append(chunks, text[i:min(i+4, len(text))])
	}
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		var sp ThinkSplitter
		for _, c := range chunks {
			sp.Feed(c)
		}
		sp.Flush()
	}
}
