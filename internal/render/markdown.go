package render

import (
	"bytes"
	"fmt"
	"html"
	"html/template"
	"reflect"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// shared renders for Markdown. It is built once and never changed: its
// node renderer is the stateless zero value, and goldmark keeps the state
// of a parse in that parse's own context, so one instance serves every
// goroutine.
var shared = newMarkdown(&nodeRenderer{})

// Markdown renders untrusted Markdown as sanitised HTML, ready to be placed
// inside an element with class "prose". If the renderer fails (it should
// not; a fuzz target looks for ways), the text is shown escaped instead.
func Markdown(src string) string {
	out, err := renderDocument(shared, []byte(src))
	if err != nil {
		return fallback(src)
	}
	return out
}

// HTML is Markdown for templates. It is the one place in LLeMbas that makes
// a template.HTML, and what it wraps has been through the sanitiser.
func HTML(src string) template.HTML {
	return template.HTML(Markdown(src))
}

// ReasoningHTML renders a reply's reasoning. Models write their reasoning
// in Markdown as they do their answers (lists, code, emphasis), so it is
// rendered the same way, through the same sanitiser; the muted look is the
// template's and the stylesheet's business.
func ReasoningHTML(s string) string {
	return Markdown(s)
}

// EscapeText escapes text for HTML character by character (&, <, >, " and
// '), so escaping a stream's chunks one by one gives the same bytes as
// escaping the whole. Spaces and slashes are left alone: a sanitiser's
// text mode that escapes them triples the size of every streamed token.
func EscapeText(s string) string {
	return html.EscapeString(s)
}

// fenceParser is goldmark's fenced-code parser, noting on the node when a
// fence was closed by a closing line rather than by the end of the text or
// of its container. A Stream shows a fence that is still open as plain
// text; Markdown highlights every fence either way.
type fenceParser struct{ parser.BlockParser }

// closedFence names the node attribute fenceParser sets. Attributes are
// never rendered: our code-block renderer writes its own markup.
const closedFence = "lembas-fence-closed"

func (p fenceParser) Continue(node ast.Node, reader text.Reader, pc parser.Context) parser.State {
	st := p.BlockParser.Continue(node, reader, pc)
	if st&parser.Close != 0 {
		node.SetAttributeString(closedFence, true)
	}
	return st
}

func fenceClosed(n ast.Node) bool {
	_, ok := n.AttributeString(closedFence)
	return ok
}

// newMarkdown builds goldmark our way: GFM tables (alignment as an align
// attribute, since the CSP refuses style attributes), strikethrough,
// linkify and task lists; no raw HTML (goldmark's default, and our
// renderers show it as text); no attributes syntax, no heading ids; no
// inline parsing of text too long to parse safely (guard.go). nr replaces
// the renderers for the nodes listed in nodes.go.
func newMarkdown(nr *nodeRenderer) goldmark.Markdown {
	return goldmark.New(
		goldmark.WithParser(parser.NewParser(
			parser.WithBlockParsers(blockParsers()...),
			parser.WithInlineParsers(parser.DefaultInlineParsers()...),
			parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
			// Around the GFM table transformer (200): a line too long to
			// parse stops a paragraph becoming a table; a paragraph too
			// long to parse, once it is known not to be a table, is text.
			parser.WithParagraphTransformers(
				util.Prioritized(longParagraphs{byLine: true}, 150),
				util.Prioritized(longParagraphs{}, 900),
			),
		)),
		goldmark.WithExtensions(
			extension.NewTable(extension.WithTableCellAlignMethod(extension.TableCellAlignAttribute)),
			extension.Strikethrough,
			extension.Linkify,
			extension.TaskList,
		),
		goldmark.WithRendererOptions(
			// Lower runs later and wins: ours replace the defaults (1000)
			// and the extensions' (500).
			renderer.WithNodeRenderers(util.Prioritized(nr, 100)),
		),
	)
}

// blockParsers is goldmark's default list with two parsers wrapped: the
// fenced-code parser notes when a fence closes, and the ATX heading
// parser refuses a line too long to parse inline (guard.go).
func blockParsers() []util.PrioritizedValue {
	fence := reflect.TypeOf(parser.NewFencedCodeBlockParser())
	heading := reflect.TypeOf(parser.NewATXHeadingParser())
	list := parser.DefaultBlockParsers()
	for i, v := range list {
		switch reflect.TypeOf(v.Value) {
		case fence:
			list[i].Value = fenceParser{v.Value.(parser.BlockParser)}
		case heading:
			list[i].Value = headingParser{v.Value.(parser.BlockParser)}
		}
	}
	return list
}

// parse parses src with refs already known (a Stream's finished part may
// define links its open tail uses).
func parse(md goldmark.Markdown, src []byte, refs []parser.Reference) ast.Node {
	pc := parser.NewContext()
	for _, r := range refs {
		pc.AddReference(r)
	}
	return md.Parser().Parse(text.NewReader(src), parser.WithContext(pc))
}

// renderDocument parses and renders src whole, then sanitises. A panic in
// goldmark or a lexer comes back as an error.
func renderDocument(md goldmark.Markdown, src []byte) (out string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("render: markdown: panic: %v", p)
		}
	}()
	doc := parse(md, src, nil)
	var buf bytes.Buffer
	buf.Grow(len(src) + len(src)/2)
	if err := md.Renderer().Render(&buf, src, doc); err != nil {
		return "", fmt.Errorf("render: markdown: %w", err)
	}
	return sanitise(buf.Bytes()), nil
}

// fallback shows text that could not be rendered as escaped paragraphs of
// lines.
func fallback(src string) string {
	if strings.TrimSpace(src) == "" {
		return ""
	}
	body := strings.ReplaceAll(EscapeText(strings.TrimRight(src, "\n")), "\n", "<br>\n")
	return sanitise([]byte("<p>" + body + "</p>\n"))
}
