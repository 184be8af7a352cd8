package render

import (
	"fmt"
	"strings"
	"testing"
)

// reply builds a model-like reply of about the given number of tokens
// (four bytes each): prose, headings, lists, a table and code blocks in a
// few languages, every section different so nothing repeats exactly.
func reply(tokens int) string {
	var b strings.Builder
	for i := 0; b.Len() < tokens*4; i++ {
		fmt.Fprintf(&b, "## Step %d\n\n", i+1)
		fmt.Fprintf(&b, "This part explains the %dth idea in plain words, with *emphasis*, a `value_%d` "+
			"and a [reference](https://example.test/doc/%d). It runs for a few sentences so that the "+
			"paragraph looks like prose a model would write, neither short nor padded.\n\n", i+1, i, i)
		fmt.Fprintf(&b, "- first point about item %d\n- second point, a little longer than the first\n- third point\n\n", i)
		switch i % 3 {
		case 0:
			fmt.Fprintf(&b, "```go\nfunc step%d(ctx context.Context, n int) (int, error) {\n"+
				"\tif n < 0 {\n\t\treturn 0, fmt.Errorf(\"step %d: negative %%d\", n)\n\t}\n"+
				"\tsum := 0\n\tfor i := range n {\n\t\tsum += i * %d // accumulate\n\t}\n\treturn sum, nil\n}\n```\n\n", i, i, i)
		case 1:
			fmt.Fprintf(&b, "```python\ndef step_%d(items: list[int]) -> int:\n"+
				"    \"\"\"Add the items up.\"\"\"\n    total = 0\n    for x in items:\n"+
				"        total += x * %d  # weight\n    return total\n```\n\n", i, i)
		case 2:
			fmt.Fprintf(&b, "| name | value | note |\n|---|--:|---|\n| a%d | %d | first |\n| b%d | %d | second |\n\n", i, i, i, i*2)
		}
	}
	return b.String()
}

// streamReply streams src in four-byte deltas with a frame every twenty
// deltas (about 100 ms of tokens at a fast model's pace), then renders
// the final HTML, as the reply engine does. With reuse, frames go into one
// buffer through AppendHTML instead of a new string each.
func streamReply(src string, reuse bool) int {
	var s Stream
	var buf []byte
	n := 0
	frame := func() {
		if reuse {
			buf = s.AppendHTML(buf[:0])
			n += len(buf)
		} else {
			n += len(s.HTML())
		}
	}
	for i, k := 0, 0; i < len(src); k++ {
		end := min(i+4, len(src))
		s.Append(src[i:end])
		i = end
		if k%20 == 19 {
			frame()
		}
	}
	frame()
	return n + len(s.Final())
}

func benchmarkStream(b *testing.B, tokens int, reuse bool) {
	src := reply(tokens)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		streamReply(src, reuse)
	}
}

func BenchmarkStream2k(b *testing.B)  { benchmarkStream(b, 2_000, false) }
func BenchmarkStream20k(b *testing.B) { benchmarkStream(b, 20_000, false) }

// The same, with frames appended to a reused buffer.
func BenchmarkStreamAppend2k(b *testing.B)  { benchmarkStream(b, 2_000, true) }
func BenchmarkStreamAppend20k(b *testing.B) { benchmarkStream(b, 20_000, true) }

// BenchmarkMarkdown50KB is one full render of a 50 KB reply with many
// code blocks: what Final costs at the end of a long reply.
func BenchmarkMarkdown50KB(b *testing.B) {
	src := reply(50 << 10 / 4)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		Markdown(src)
	}
	b.ReportMetric(float64(strings.Count(src, "```")/2), "codeblocks")
}
