package render

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
)

// Stream renders a reply while it is being written.
//
// Frames carry whole blocks, so every frame is the render of everything so
// far; a Stream makes that cheap by rendering each finished top-level
// block once and keeping its HTML. Only the open tail, from the first block
// that may still change to the end, is parsed and rendered again by each
// call to HTML.
//
// A top-level block is finished when a later top-level block has started
// on a complete line (one that ends in a newline) and the line just before
// that later block is blank. Block structure is decided line by line, so a
// block closed by a complete line stays closed whatever follows; the blank
// line also means no paragraph was open across the boundary, so setext
// underlines, GFM tables and link reference definitions, which reinterpret
// a paragraph's lines when it closes, have already done so. A partial last
// line is never trusted: "2" may yet become "2. item" and join the list
// above. The cost of being careful is only that blocks written without a
// blank line between them are cached together, a little later.
//
// What the live view can get wrong, until Final: a link reference
// definition that appears after a finished block using it. Definitions in
// finished blocks are carried forward, so the usual order (use after
// definition, or definitions at the end with the uses still in the open
// tail) renders as it will finally.
//
// One top-level block that keeps growing (a long list, a blockquote, one
// huge code fence) is re-rendered whole on each call while it grows; a
// closed fence in it is highlighted once and remembered, and the fence
// still being written is shown as escaped text, unhighlighted, inside the
// same code-block wrapper until it closes.
//
// The zero Stream is ready to use. A Stream is not safe for concurrent use:
// the reply engine calls it under its own lock.
type Stream struct {
	src    []byte
	done   int                // src[:done] is finished and rendered in cached
	cached strings.Builder    // sanitised HTML of src[:done]
	refs   []parser.Reference // link reference definitions in src[:done]
	md     goldmark.Markdown
	nr     *nodeRenderer
	memo   highlightMemo
	bw     *bufio.Writer
}

// Append adds the next piece of the reply.
func (s *Stream) Append(delta string) {
	s.src = append(s.src, delta...)
}

// HTML returns the sanitised render of everything appended so far.
func (s *Stream) HTML() string {
	tail := s.tailHTML() // first: it may move finished blocks into the cache
	return s.cached.String() + tail
}

// AppendHTML appends what HTML returns to dst. Every frame carries the
// whole reply, so copying the finished part into a new string per frame is
// the one cost of streaming that grows with the square of a reply's
// length; a caller that reuses one buffer across frames pays only the
// copy.
func (s *Stream) AppendHTML(dst []byte) []byte {
	tail := s.tailHTML()
	dst = append(dst, s.cached.String()...)
	return append(dst, tail...)
}

// tailHTML renders the open tail, caching what has finished.
func (s *Stream) tailHTML() string {
	out, err := s.renderTail(s.src[s.done:])
	if err != nil {
		return fallback(string(s.src[s.done:]))
	}
	return out
}

// Final is one full render of the whole text, the HTML to store: exactly
// Markdown of everything appended, with the code blocks the stream has
// already highlighted taken from its memo.
func (s *Stream) Final() string {
	s.setup()
	out, err := renderDocument(s.md, s.src)
	if err != nil {
		return fallback(string(s.src))
	}
	return out
}

func (s *Stream) setup() {
	if s.md == nil {
		s.memo = highlightMemo{}
		s.nr = &nodeRenderer{memo: s.memo}
		s.md = newMarkdown(s.nr)
	}
}

// renderTail parses the open tail, moves the blocks that have finished
// into the cache and renders the rest.
func (s *Stream) renderTail(tail []byte) (out string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("render: stream: panic: %v", p)
		}
	}()
	s.setup()
	doc := parse(s.md, tail, s.refs)
	cut, first := finishedPrefix(doc, tail)

	var buf bytes.Buffer
	if s.bw == nil {
		s.bw = bufio.NewWriter(&buf)
	} else {
		s.bw.Reset(&buf)
	}
	if cut > 0 {
		s.nr.open = nil
		for c := doc.FirstChild(); c != first; c = c.NextSibling() {
			if err := s.md.Renderer().Render(s.bw, tail, c); err != nil {
				return "", fmt.Errorf("render: stream: %w", err)
			}
			s.refs = append(s.refs, definitions(c)...)
		}
		s.cached.WriteString(sanitise(buf.Bytes()))
		s.done += cut
		buf.Reset()
	} else {
		first = doc.FirstChild()
	}

	s.nr.open = openFence(doc)
	defer func() { s.nr.open = nil }()
	for c := first; c != nil; c = c.NextSibling() {
		if err := s.md.Renderer().Render(s.bw, tail, c); err != nil {
			return "", fmt.Errorf("render: stream: %w", err)
		}
	}
	return sanitise(buf.Bytes()), nil
}

// finishedPrefix returns where the open part of src begins (0 when nothing
// is finished) and its first top-level block: the last top-level block
// that starts on a complete line right after a blank line. See Stream for
// why that is the rule.
func finishedPrefix(doc ast.Node, src []byte) (int, ast.Node) {
	lastNL := bytes.LastIndexByte(src, '\n')
	if lastNL < 0 {
		return 0, nil
	}
	cut, first := 0, ast.Node(nil)
	prevStart := -1 // line start of the previous top-level block
	for c := doc.FirstChild(); c != nil; c = c.NextSibling() {
		start := -1
		if p := c.Pos(); p >= 0 {
			start = bytes.LastIndexByte(src[:p], '\n') + 1
		}
		before := prevStart
		prevStart = start
		// A block whose position is unknown, or not past the block before
		// it (a paragraph transformer can split one paragraph into blocks
		// sharing a position, as an intro line and a GFM table do), is not
		// a place to cut; nor is the first block, nor a partial line.
		if before < 0 || start <= before || start > lastNL {
			continue
		}
		prev := bytes.LastIndexByte(src[:start-1], '\n') + 1
		if !isBlank(src[prev : start-1]) {
			continue
		}
		cut, first = start, c
	}
	return cut, first
}

func isBlank(line []byte) bool {
	return len(bytes.Trim(line, " \t\r")) == 0
}

// openFence returns the fenced code block at the very end of doc when it
// has not been closed yet: the one a model is still writing.
func openFence(doc ast.Node) ast.Node {
	for n := doc.LastChild(); n != nil; n = n.LastChild() {
		if n.Kind() == ast.KindFencedCodeBlock {
			if fenceClosed(n) {
				return nil
			}
			return n
		}
	}
	return nil
}

// definitions returns copies of the link reference definitions in n, to be
// known when the rest of the stream is parsed.
func definitions(n ast.Node) []parser.Reference {
	var refs []parser.Reference
	_ = ast.Walk(n, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		if d, ok := n.(*ast.LinkReferenceDefinition); ok {
			refs = append(refs, parser.NewReference(
				bytes.Clone(d.Label), bytes.Clone(d.Destination), bytes.Clone(d.Title)))
			return ast.WalkSkipChildren, nil
		}
		if n.Type() == ast.TypeInline {
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return refs
}

// highlightMemo keeps the highlighted HTML of a stream's code blocks, by
// language and code, for the stream's life: a closed fence in the open
// tail is highlighted once rather than per frame, and Final reuses the
// work instead of highlighting the whole reply a second time (highlighting
// is most of what rendering costs). Highlighting is a pure function of
// language and code, so a remembered block is the block Markdown would
// produce. It holds about twice the reply's code.
type highlightMemo map[string]string

func memoKey(lang, code string) string { return lang + "\x00" + code }

func (m highlightMemo) get(lang, code string) (string, bool) {
	h, ok := m[memoKey(lang, code)]
	return h, ok
}

func (m highlightMemo) put(lang, code, h string) {
	m[memoKey(lang, code)] = h
}
