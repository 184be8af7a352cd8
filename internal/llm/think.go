package llm

import "strings"

const (
	openTag  = "<think>"
	closeTag = "</think>"
)

// ThinkSplitter separates thinking written inline in content, as
// <think>…</think> (Ollama and friends), from the answer, as the content
// streams. Tags arrive split across chunks at any byte ("<th" + "ink>"),
// so it holds back a tail of at most seven bytes that could still become a
// tag, and Flush releases it: call Flush at the end of every round, or the
// round's last words go missing (spec: "A round's text is flushed before
// it is echoed back").
//
// A <think> anywhere starts reasoning and a </think> ends it; both tags
// are removed wherever they appear, so a stray one never reaches the
// screen. Without a closing tag everything after <think> is reasoning
// until Flush. The zero value is ready to use; it is not safe for
// concurrent use.
type ThinkSplitter struct {
	thinking bool
	held     string
}

// Feed takes the next piece of content and returns what of it is answer
// and what is reasoning, so far as can be told yet.
func (s *ThinkSplitter) Feed(chunk string) (answer, reasoning string) {
	buf := s.take(chunk)
	for buf != "" {
		var text string
		var isReasoning bool
		text, isReasoning, buf = s.step(buf)
		if isReasoning {
			reasoning = join(reasoning, text)
		} else {
			answer = join(answer, text)
		}
	}
	return answer, reasoning
}

// join concatenates without allocating when one side is empty, which is
// every call that met no tag.
func join(a, b string) string {
	if a == "" {
		return b
	}
	if b == "" {
		return a
	}
	return a + b
}

// Flush releases what was held back and starts afresh: the next round's
// content begins outside a think block even if this one never closed it.
func (s *ThinkSplitter) Flush() (answer, reasoning string) {
	held, thinking := s.held, s.thinking
	s.held, s.thinking = "", false
	if thinking {
		return "", held
	}
	return held, ""
}

// Thinking reports whether the splitter is inside a think block.
func (s *ThinkSplitter) Thinking() bool { return s.thinking }

// take prepends what was held back to chunk.
func (s *ThinkSplitter) take(chunk string) string {
	if s.held == "" {
		return chunk
	}
	buf := s.held + chunk
	s.held = ""
	return buf
}

// step splits the next piece off buf: text to emit (possibly empty when a
// tag was consumed or a tail held back), whether it is reasoning, and what
// is left.
func (s *ThinkSplitter) step(buf string) (text string, isReasoning bool, rest string) {
	i := strings.IndexByte(buf, '<')
	switch {
	case i < 0:
		return buf, s.thinking, ""
	case i > 0:
		return buf[:i], s.thinking, buf[i:]
	case strings.HasPrefix(buf, openTag):
		s.thinking = true
		return "", s.thinking, buf[len(openTag):]
	case strings.HasPrefix(buf, closeTag):
		s.thinking = false
		return "", s.thinking, buf[len(closeTag):]
	case len(buf) < len(closeTag) && (strings.HasPrefix(openTag, buf) || strings.HasPrefix(closeTag, buf)):
		// The end of the chunk could be the start of a tag.
		s.held = buf
		return "", s.thinking, ""
	default:
		// A '<' that starts no tag: emit it with what follows, up to the
		// next '<'.
		j := strings.IndexByte(buf[1:], '<')
		if j < 0 {
			return buf, s.thinking, ""
		}
		return buf[:1+j], s.thinking, buf[1+j:]
	}
}

// StripReasoning returns a completed text without its thinking, trimmed:
// what a title or a summary should be made of. Besides <think> blocks
// (closed or not) it handles a text that only closes one: a template that
// opens the block in the prompt (DeepSeek-R1 and Qwen3 distils behind a
// server that does not parse reasoning) leaves the model writing thinking
// first and then </think>, so everything before that tag is thinking.
func StripReasoning(s string) string {
	if c := strings.Index(s, closeTag); c >= 0 {
		if o := strings.Index(s, openTag); o < 0 || o > c {
			s = s[c+len(closeTag):]
		}
	}
	var sp ThinkSplitter
	a, _ := sp.Feed(s)
	tail, _ := sp.Flush()
	return strings.TrimSpace(a + tail)
}
