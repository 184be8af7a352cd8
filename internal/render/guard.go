package render

import (
	"bytes"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// maxInlineText is the longest paragraph whose inline Markdown is parsed.
// goldmark's inline parser is quadratic on some inputs: a paragraph of
// repeated "[a](" costs about 0.2 s at 16 KiB and 11 s at 80 KiB on this
// machine, and a Stream would pay that on every frame. Prose is never one
// paragraph this long; such a paragraph is shown as plain text instead.
const maxInlineText = 16 << 10

// longParagraphs replaces a paragraph too long to parse, when it closes
// and before inline parsing, with a plainParagraph, which goldmark does not
// parse further. With byLine it looks for one line longer than
// maxInlineText and runs before the GFM table transformer (a table's cells
// are parsed one by one, so only a long row is a danger there); without,
// it measures the whole paragraph and runs after, so a long table is still
// a table.
type longParagraphs struct{ byLine bool }

func (g longParagraphs) Transform(node *ast.Paragraph, _ text.Reader, _ parser.Context) {
	lines := node.Lines()
	size, longest := 0, 0
	for i := range lines.Len() {
		seg := lines.At(i)
		size += seg.Len()
		longest = max(longest, seg.Len())
	}
	if g.byLine && longest <= maxInlineText || !g.byLine && size <= maxInlineText {
		return
	}
	p := &plainParagraph{}
	p.SetLines(lines)
	p.SetPos(node.Pos())
	p.SetBlankPreviousLines(node.HasBlankPreviousLines())
	node.Parent().ReplaceChild(node.Parent(), node, p)
}

// headingParser is goldmark's ATX heading parser, except that a heading
// line too long to parse inline is not a heading: it falls through to a
// paragraph, which longParagraphs then shows as text.
type headingParser struct{ parser.BlockParser }

func (p headingParser) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	if line, _ := reader.PeekLine(); len(line) > maxInlineText {
		return nil, parser.NoChildren
	}
	return p.BlockParser.Open(parent, reader, pc)
}

// plainParagraph is a paragraph shown as its text, unparsed.
type plainParagraph struct{ ast.BaseBlock }

var kindPlainParagraph = ast.NewNodeKind("PlainParagraph")

func (n *plainParagraph) Kind() ast.NodeKind { return kindPlainParagraph }

// IsRaw tells goldmark not to parse inlines in it.
func (n *plainParagraph) IsRaw() bool { return true }

func (n *plainParagraph) Dump(source []byte, level int) { ast.DumpHelper(n, source, level, nil, nil) }

func (r *nodeRenderer) renderPlainParagraph(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	var text []byte
	lines := node.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		text = append(text, seg.Value(source)...)
	}
	_, _ = w.WriteString("<p>")
	_, _ = w.Write(util.EscapeHTML(bytes.TrimRight(text, " \t\r\n")))
	_, _ = w.WriteString("</p>\n")
	return ast.WalkSkipChildren, nil
}
