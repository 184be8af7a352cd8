package llm

import (
	"bytes"
	"io"
	"testing"
)

const fuzzMaxLine = 4096

func FuzzSSEDecoder(f *testing.F) {
	for _, seed := range []string{
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n",
		"data:{\"choices\":[{\"delta\":{\"reasoning_content\":\"a\",\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"{\"}}]}}]}\r\n\r\n",
		": keepalive\nevent: error\ndata: {\"message\":\"boom\"}\n\n",
		"data: {\"error\":{\"message\":\"x\",\"code\":500}}\n\n",
		"data: {\"choices\":[{\"delta\":{\"content\":[{\"type\":\"thinking\",\"thinking\":\"t\"}]}}],\"usage\":{\"prompt_tokens\":\"3\"}}\r\rdata: [DONE]",
		"data: {\ndata: \"choices\":[]}\n\n",
		"\xEF\xBB\xBFdata: {\"object\":\"error\",\"message\":\"m\"}\n\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		s := decodeStream(bytes.NewReader(in), fuzzMaxLine)
		var asm ToolCallAssembler
		var sp ThinkSplitter
		// Every chunk returned used at least one byte of input, so more
		// calls than bytes means a loop.
		for i := 0; ; i++ {
			if i > len(in)+2 {
				t.Fatalf("Next returned %d chunks from %d bytes", i, len(in))
			}
			c, err := s.Next()
			if e := s.events; cap(e.line) > 4*fuzzMaxLine || cap(e.data) > 4*fuzzMaxLine {
				t.Fatalf("buffers grew to %d / %d", cap(e.line), cap(e.data))
			}
			if err != nil {
				if err != io.EOF {
					if _, isErr := err.(*Error); !isErr {
						t.Fatalf("untyped error %T: %v", err, err)
					}
				}
				break
			}
			sp.Feed(c.Content)
			for _, d := range c.ToolCalls {
				_ = asm.Add(d)
			}
		}
		sp.Flush()
		asm.Calls()
	})
}

func FuzzThinkSplitter(f *testing.F) {
	for _, seed := range []struct {
		s    string
		cuts []byte
	}{
		{"<think>plan</think>answer", []byte{3, 1, 4}},
		{"a<th<think>b</thi</think>c</think><think>", []byte{1, 1, 1, 1, 2}},
		{"</<think>think>", []byte{2}},
		{"no tags at all", nil},
		{"<<<<think>>>>", []byte{0, 0, 1}},
	} {
		f.Add(seed.s, seed.cuts)
	}
	f.Fuzz(func(t *testing.T, s string, cuts []byte) {
		var chunks []string
		rest := s
		for _, c := range cuts {
			n := min(int(c%10), len(rest)) // 0..9 bytes, empty chunks included
			chunks = append(chunks, rest[:n])
			rest = rest[n:]
		}
		chunks = append(chunks, rest)

		wantA, wantR := splitRef(s)
		a, r, ordered := feedAll(t, chunks)
		if a != wantA || r != wantR {
			t.Fatalf("chunks %q: got %q / %q, want %q / %q", chunks, a, r, wantA, wantR)
		}
		if ordered != withoutTags(s) {
			t.Fatalf("chunks %q: in order %q, want %q", chunks, ordered, withoutTags(s))
		}
		// Feed, the exported form, agrees.
		var sp ThinkSplitter
		var fa, fr string
		for _, c := range chunks {
			x, y := sp.Feed(c)
			fa, fr = fa+x, fr+y
		}
		x, y := sp.Flush()
		if fa+x != wantA || fr+y != wantR {
			t.Fatalf("Feed: got %q / %q", fa+x, fr+y)
		}
	})
}
