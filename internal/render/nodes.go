package render

import (
	"bufio"
	"bytes"
	"net/url"
	"strings"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/renderer"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"
)

// linkAttrs follow every href we write. The sanitiser accepts exactly this
// rel value and adds its parts back if anything lost them.
const linkAttrs = ` rel="noopener noreferrer nofollow" target="_blank"`

// plainLabel is the header label of a code block without a language.
const plainLabel = "text"

// nodeRenderer replaces goldmark's renderers for the nodes where untrusted
// text meets an attribute or where our markup differs: code blocks,
// headings, links, autolinks, images, raw HTML and task checkboxes.
//
// The zero value is stateless and shared by Markdown. A Stream has its own,
// whose fields it sets between renders (a Stream is used by one goroutine).
type nodeRenderer struct {
	// open is the fence still being written at the end of a stream's open
	// tail: it is shown escaped, unhighlighted, until it closes.
	open ast.Node
	// memo keeps a stream's highlighted blocks; nil for Markdown.
	memo highlightMemo
}

func (r *nodeRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindFencedCodeBlock, r.renderCode)
	reg.Register(ast.KindCodeBlock, r.renderCode)
	reg.Register(ast.KindHeading, r.renderHeading)
	reg.Register(ast.KindLink, r.renderLink)
	reg.Register(ast.KindAutoLink, r.renderAutoLink)
	reg.Register(ast.KindImage, r.renderImage)
	reg.Register(ast.KindRawHTML, r.renderRawHTML)
	reg.Register(ast.KindHTMLBlock, r.renderHTMLBlock)
	reg.Register(east.KindTaskCheckBox, r.renderTaskCheckBox)
	reg.Register(kindPlainParagraph, r.renderPlainParagraph)
}

// renderCode writes fenced and indented code blocks in one wrapper: a
// header strip with the language and a Copy button, then one <pre>. It
// replaces goldmark's renderer rather than configuring it, so there is
// never a second <pre> inside ours.
func (r *nodeRenderer) renderCode(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	var lang string
	if f, ok := node.(*ast.FencedCodeBlock); ok {
		lang = codeLang(f.Language(source))
	}
	var code strings.Builder
	lines := node.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		code.Write(seg.Value(source))
	}

	_, _ = w.WriteString(`<div class="code-block"`)
	label := plainLabel
	if lang != "" {
		label = EscapeText(lang)
		_, _ = w.WriteString(` data-lang="`)
		_, _ = w.WriteString(label)
		_ = w.WriteByte('"')
	}
	_, _ = w.WriteString(`><div class="code-head"><span class="code-lang">`)
	_, _ = w.WriteString(label)
	_, _ = w.WriteString(`</span><button type="button" class="code-copy" data-copy>Copy</button></div><pre class="chroma"><code>`)
	if node == r.open {
		_, _ = w.WriteString(EscapeText(code.String()))
	} else {
		_, _ = w.WriteString(r.highlighted(lang, code.String()))
	}
	_, _ = w.WriteString("</code></pre></div>\n")
	return ast.WalkSkipChildren, nil
}

func (r *nodeRenderer) highlighted(lang, code string) string {
	if r.memo != nil {
		if h, ok := r.memo.get(lang, code); ok {
			return h
		}
	}
	h, ok := highlight(lang, code)
	if !ok {
		h = EscapeText(code)
	}
	if r.memo != nil {
		r.memo.put(lang, code, h)
	}
	return h
}

// renderHeading demotes by two levels: a reply's "# Title" is a section of
// a message, not the page's title.
func (r *nodeRenderer) renderHeading(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	level := min(node.(*ast.Heading).Level+2, 6)
	if entering {
		_, _ = w.WriteString("<h")
		_ = w.WriteByte(byte('0' + level))
		_ = w.WriteByte('>')
	} else {
		_, _ = w.WriteString("</h")
		_ = w.WriteByte(byte('0' + level))
		_, _ = w.WriteString(">\n")
	}
	return ast.WalkContinue, nil
}

// renderLink writes a link only to a destination we allow; any other link
// is shown as its text.
func (r *nodeRenderer) renderLink(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.Link)
	href, ok := linkTarget(n.Destination, true)
	if !ok {
		return ast.WalkContinue, nil
	}
	if entering {
		openLink(w, href, n.Title)
	} else {
		_, _ = w.WriteString("</a>")
	}
	return ast.WalkContinue, nil
}

func (r *nodeRenderer) renderAutoLink(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.AutoLink)
	dest := n.URL(source)
	if n.AutoLinkType == ast.AutoLinkEmail && !hasPrefixFold(dest, "mailto:") {
		dest = append([]byte("mailto:"), dest...)
	}
	label := n.Label(source)
	if href, ok := linkTarget(dest, false); ok {
		openLink(w, href, nil)
		_, _ = w.Write(util.EscapeHTML(label))
		_, _ = w.WriteString("</a>")
	} else {
		_, _ = w.Write(util.EscapeHTML(label))
	}
	return ast.WalkSkipChildren, nil
}

// renderImage never loads anything: an image becomes a link to its URL,
// labelled with its alt text (or the URL when there is none), and only for
// http and https. Inside a link, where a second link cannot go, and for any
// other URL, only the alt text is shown.
func (r *nodeRenderer) renderImage(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.Image)
	var alt bytes.Buffer
	aw := bufio.NewWriter(&alt)
	writeAlt(aw, source, n)
	_ = aw.Flush()
	href, ok := linkTarget(n.Destination, true)
	if ok && (hasPrefixFold([]byte(href), "http:") || hasPrefixFold([]byte(href), "https:")) && !insideLink(n) {
		openLink(w, href, n.Title)
		if alt.Len() > 0 {
			_, _ = w.Write(alt.Bytes())
		} else {
			_, _ = w.WriteString(EscapeText(href))
		}
		_, _ = w.WriteString("</a>")
		return ast.WalkSkipChildren, nil
	}
	_, _ = w.Write(alt.Bytes())
	return ast.WalkSkipChildren, nil
}

// renderRawHTML shows HTML written inline as the text it is ("Vec<T>"
// stays readable), except a bare line break, which tables written by
// models use for line breaks in cells.
func (r *nodeRenderer) renderRawHTML(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	n := node.(*ast.RawHTML)
	var raw []byte
	for i := range n.Segments.Len() {
		seg := n.Segments.At(i)
		raw = append(raw, seg.Value(source)...)
	}
	if isLineBreakTag(raw) {
		_, _ = w.WriteString("<br>")
		return ast.WalkSkipChildren, nil
	}
	_, _ = w.Write(util.EscapeHTML(raw))
	return ast.WalkSkipChildren, nil
}

// renderHTMLBlock shows a block of HTML as text, line by line.
func (r *nodeRenderer) renderHTMLBlock(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.HTMLBlock)
	var raw []byte
	lines := n.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		raw = append(raw, seg.Value(source)...)
	}
	if n.HasClosure() {
		raw = append(raw, n.ClosureLine.Value(source)...)
	}
	raw = bytes.TrimRight(raw, " \t\r\n")
	if len(raw) == 0 {
		return ast.WalkSkipChildren, nil
	}
	_, _ = w.WriteString("<p>")
	for i, line := range bytes.Split(raw, []byte("\n")) {
		if i > 0 {
			_, _ = w.WriteString("<br>\n")
		}
		_, _ = w.Write(util.EscapeHTML(bytes.TrimRight(line, "\r")))
	}
	_, _ = w.WriteString("</p>\n")
	return ast.WalkSkipChildren, nil
}

func (r *nodeRenderer) renderTaskCheckBox(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	if node.(*east.TaskCheckBox).IsChecked {
		_, _ = w.WriteString(`<input type="checkbox" checked disabled>`)
	} else {
		_, _ = w.WriteString(`<input type="checkbox" disabled>`)
	}
	return ast.WalkContinue, nil
}

// linkTarget returns the href for a Markdown destination, or false when
// it is not an absolute http or https URL with a host, or a mailto: URL.
// Backslash escapes and character references are resolved first (when
// resolve is set, as for links and images), so "&#106;avascript:" is seen
// for what it is.
func linkTarget(dest []byte, resolve bool) (string, bool) {
	href := string(util.URLEscape(bytes.TrimSpace(dest), resolve))
	u, err := url.Parse(href)
	if err != nil {
		return "", false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if u.Host == "" {
			return "", false
		}
	case "mailto":
		if u.Opaque == "" {
			return "", false
		}
	default:
		return "", false
	}
	return href, true
}

func openLink(w util.BufWriter, href string, title []byte) {
	_, _ = w.WriteString(`<a href="`)
	_, _ = w.WriteString(EscapeText(href))
	_ = w.WriteByte('"')
	if len(title) > 0 {
		_, _ = w.WriteString(` title="`)
		gmhtml.DefaultWriter.Write(w, title)
		_ = w.WriteByte('"')
	}
	_, _ = w.WriteString(linkAttrs)
	_ = w.WriteByte('>')
}

// writeAlt writes an image's alt text: the text of its children, escaped,
// with no markup.
func writeAlt(w util.BufWriter, source []byte, n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch t := c.(type) {
		case *ast.Text:
			if t.IsRaw() {
				gmhtml.DefaultWriter.RawWrite(w, t.Segment.Value(source))
			} else {
				gmhtml.DefaultWriter.Write(w, t.Segment.Value(source))
			}
			if t.SoftLineBreak() || t.HardLineBreak() {
				_ = w.WriteByte(' ')
			}
		case *ast.String:
			if t.IsCode() || t.IsRaw() {
				gmhtml.DefaultWriter.RawWrite(w, t.Value)
			} else {
				gmhtml.DefaultWriter.Write(w, t.Value)
			}
		case *ast.RawHTML:
			// Alt text is text: HTML inside it is dropped, not shown.
		default:
			writeAlt(w, source, c)
		}
	}
}

func insideLink(n ast.Node) bool {
	for p := n.Parent(); p != nil; p = p.Parent() {
		switch p.Kind() {
		case ast.KindLink, ast.KindAutoLink:
			return true
		}
	}
	return false
}

func isLineBreakTag(raw []byte) bool {
	s := strings.ToLower(strings.Join(strings.Fields(string(raw)), ""))
	return s == "<br>" || s == "<br/>"
}

func hasPrefixFold(b []byte, prefix string) bool {
	return len(b) >= len(prefix) && strings.EqualFold(string(b[:len(prefix)]), prefix)
}
