package llm

import (
	"strings"
	"testing"
)

// splitRef is the obvious, non-streaming reading: walk the text, switch to
// reasoning at <think> and back at </think>, drop both tags.
func splitRef(s string) (answer, reasoning string) {
	var a, r strings.Builder
	thinking := false
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], openTag):
			thinking = true
			i += len(openTag)
		case strings.HasPrefix(s[i:], closeTag):
			thinking = false
			i += len(closeTag)
		default:
			if thinking {
				r.WriteByte(s[i])
			} else {
				a.WriteByte(s[i])
			}
			i++
		}
	}
	return a.String(), r.String()
}

// withoutTags removes every <think> and </think> that occurs in s.
func withoutTags(s string) string {
	var all strings.Builder
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], openTag):
			i += len(openTag)
		case strings.HasPrefix(s[i:], closeTag):
			i += len(closeTag)
		default:
			all.WriteByte(s[i])
			i++
		}
	}
	return all.String()
}

// feedAll feeds chunks and returns the answer, the reasoning, and every
// piece in order with tags removed, checking nothing more than a tag's
// worth is ever held back.
func feedAll(t testing.TB, chunks []string) (answer, reasoning, ordered string) {
	var sp ThinkSplitter
	var a, r, o strings.Builder
	for _, c := range chunks {
		buf := sp.take(c)
		for buf != "" {
			var text string
			var isReasoning bool
			text, isReasoning, buf = sp.step(buf)
			o.WriteString(text)
			if isReasoning {
				r.WriteString(text)
			} else {
				a.WriteString(text)
			}
		}
		if len(sp.held) >= len(closeTag) {
			t.Fatalf("holding %q", sp.held)
		}
	}
	fa, fr := sp.Flush()
	a.WriteString(fa)
	r.WriteString(fr)
	o.WriteString(fa + fr)
	return a.String(), r.String(), o.String()
}

func TestThinkSplitter(t *testing.T) {
	tests := []struct {
		name, in, answer, reasoning string
	}{
		{"no tags", "Just an answer.", "Just an answer.", ""},
		{"think first", "<think>Let me see.</think>The answer.", "The answer.", "Let me see."},
		{"text before the tag", "Sure. <think>hm</think> Done.", "Sure.  Done.", "hm"},
		{"never closed", "<think>still thinking", "", "still thinking"},
		{"think mid-text", "A<think>b</think>C<think>d</think>E", "ACE", "bd"},
		{"stray close is dropped", "thinking</think>answer", "thinkinganswer", ""},
		{"open inside think is dropped", "<think>a<think>b</think>c", "c", "ab"},
		{"other tags pass", "<b>bold</b> <thinking> x < y <th", "<b>bold</b> <thinking> x < y <th", ""},
		{"a lone angle at the end", "1 <", "1 <", ""},
		{"empty", "", "", ""},
		{"newlines kept", "<think>\nplan\n</think>\n\nHello", "\n\nHello", "\nplan\n"},
		{"multibyte around tags", "é<think>ü</think>ß", "éß", "ü"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if a, r := splitRef(tt.in); a != tt.answer || r != tt.reasoning {
				t.Fatalf("reference splits %q into %q / %q; the table is wrong", tt.in, a, r)
			}
			// Every split point, in two pieces and one byte at a time.
			for i := 0; i <= len(tt.in); i++ {
				a, r, _ := feedAll(t, []string{tt.in[:i], tt.in[i:]})
				if a != tt.answer || r != tt.reasoning {
					t.Fatalf("split at %d (%q|%q): got %q / %q, want %q / %q", i, tt.in[:i], tt.in[i:], a, r, tt.answer, tt.reasoning)
				}
			}
			var bytes []string
			for i := range len(tt.in) {
				bytes = append(bytes, tt.in[i:i+1])
			}
			if a, r, _ := feedAll(t, bytes); a != tt.answer || r != tt.reasoning {
				t.Fatalf("byte at a time: got %q / %q", a, r)
			}
		})
	}
}

// Every pair of split points of a sample that has every awkward case in it.
func TestThinkSplitterAllSplits(t *testing.T) {
	in := "Hi <t <think>plan <b> & </thin</think>An</think>swer <think>more"
	wantA, wantR := splitRef(in)
	for i := 0; i <= len(in); i++ {
		for j := i; j <= len(in); j++ {
			a, r, o := feedAll(t, []string{in[:i], in[i:j], in[j:]})
			if a != wantA || r != wantR {
				t.Fatalf("splits %d,%d: got %q / %q, want %q / %q", i, j, a, r, wantA, wantR)
			}
			if o != withoutTags(in) {
				t.Fatalf("splits %d,%d: in order %q, want %q", i, j, o, withoutTags(in))
			}
		}
	}
}

func TestThinkSplitterFeedAndFlush(t *testing.T) {
	var sp ThinkSplitter
	steps := []struct{ in, answer, reasoning string }{
		{"Hello <", "Hello ", ""},
		{"thi", "", ""},
		{"nk>plan", "", "plan"},
		{"</th", "", ""},
		{"ink>done <", "done ", ""},
	}
	for _, s := range steps {
		a, r := sp.Feed(s.in)
		if a != s.answer || r != s.reasoning {
			t.Fatalf("Feed(%q) = %q / %q, want %q / %q", s.in, a, r, s.answer, s.reasoning)
		}
	}
	// The held "<" comes out at the end of the round.
	if a, r := sp.Flush(); a != "<" || r != "" {
		t.Fatalf("Flush = %q / %q", a, r)
	}
	// A round left inside a think block does not make the next one
	// reasoning.
	sp.Feed("<think>unfinished")
	if !sp.Thinking() {
		t.Fatal("not thinking")
	}
	sp.Flush()
	if a, _ := sp.Feed("fresh"); a != "fresh" {
		t.Fatalf("next round = %q", a)
	}
}

func TestStripReasoning(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Foxes in Bree", "Foxes in Bree"},
		{"<think>Okay, the user wants a short title for</think>\n\nFoxes in Bree", "Foxes in Bree"},
		{"  <think>\nhm\n</think>  Foxes  ", "Foxes"},
		// The template opened the block in the prompt: only the close
		// tag is in the text.
		{"Okay, the user wants a short title.\n</think>\n\nFoxes in Bree", "Foxes in Bree"},
		{"<think>ran out of tokens", ""},
		{"Title<think>afterthought</think>", "Title"},
	}
	for _, tt := range tests {
		if got := StripReasoning(tt.in); got != tt.want {
			t.Errorf("StripReasoning(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
