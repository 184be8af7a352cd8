package render

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// What any output of this package may contain, checked on the parsed
// document rather than on strings: the elements and attributes our
// renderers emit, with the values they emit, and nothing else.
var allowedAttrs = map[string]map[string]func(string) bool{
	"p": nil, "br": nil, "hr": nil, "em": nil, "strong": nil, "del": nil, "code": nil,
	"blockquote": nil, "ul": nil, "li": nil, "table": nil, "thead": nil, "tbody": nil, "tr": nil,
	"h3": nil, "h4": nil, "h5": nil, "h6": nil,
	"ol": {"start": digits},
	"th": {"align": oneOf("left", "center", "right")},
	"td": {"align": oneOf("left", "center", "right")},
	"a": {
		"href":   safeHref,
		"rel":    oneOf("noopener noreferrer nofollow"),
		"target": oneOf("_blank"),
		"title":  func(string) bool { return true },
	},
	"input":  {"type": oneOf("checkbox"), "checked": oneOf(""), "disabled": oneOf("")},
	"div":    {"class": oneOf("code-block", "code-head"), "data-lang": langPattern.MatchString},
	"span":   {"class": func(v string) bool { return v == "code-lang" || isTokenClass(v) }},
	"button": {"type": oneOf("button"), "class": oneOf("code-copy"), "data-copy": oneOf("")},
	"pre":    {"class": oneOf("chroma")},
}

func oneOf(vals ...string) func(string) bool {
	return func(v string) bool {
		for _, w := range vals {
			if v == w {
				return true
			}
		}
		return false
	}
}

func digits(v string) bool {
	return v != "" && strings.Trim(v, "0123456789") == ""
}

func isTokenClass(v string) bool {
	rest, ok := strings.CutPrefix(v, tokenClassPrefix)
	return ok && len(rest) >= 1 && len(rest) <= 3 && strings.Trim(rest, "abcdefghijklmnopqrstuvwxyz0123456789") == ""
}

// safeHref is an absolute http(s) URL with a host, or mailto:.
func safeHref(v string) bool {
	u, err := url.Parse(v)
	if err != nil {
		return false
	}
	switch u.Scheme {
	case "http", "https":
		return u.Host != ""
	case "mailto":
		return u.Opaque != ""
	}
	return false
}

// unsafeParts parses out as the body of a page would and lists everything
// in it that is not allowed. The named checks (scripts, images, event
// handlers, styles, htmx) are stated on their own as well as through the
// allow-list, so a failure says plainly what got through.
func unsafeParts(out string) []string {
	body := &html.Node{Type: html.ElementNode, DataAtom: atom.Div, Data: "div"}
	nodes, err := html.ParseFragment(strings.NewReader(out), body)
	if err != nil {
		return []string{"does not parse: " + err.Error()}
	}
	var problems []string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.CommentNode:
			problems = append(problems, "a comment")
		case html.ElementNode:
			problems = append(problems, elementProblems(n)...)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	for _, n := range nodes {
		walk(n)
	}
	return problems
}

func elementProblems(n *html.Node) []string {
	var problems []string
	tag := n.Data
	switch tag {
	case "script", "img", "iframe", "svg", "object", "embed", "style", "math", "form",
		"link", "meta", "base", "frame", "video", "audio", "source", "picture", "template":
		problems = append(problems, "a <"+tag+"> element")
	}
	allowed, known := allowedAttrs[tag]
	if !known {
		problems = append(problems, "element <"+tag+"> is not on the list")
	}
	has := map[string]bool{}
	for _, a := range n.Attr {
		key := strings.ToLower(a.Key)
		if a.Namespace != "" {
			key = a.Namespace + ":" + key
		}
		has[key] = true
		switch {
		case strings.HasPrefix(key, "on"):
			problems = append(problems, fmt.Sprintf("<%s %s>: event handler", tag, key))
		case key == "style":
			problems = append(problems, fmt.Sprintf("<%s style>", tag))
		case key == "id":
			problems = append(problems, fmt.Sprintf("<%s id>", tag))
		case strings.HasPrefix(key, "hx-"), strings.HasPrefix(key, "data-hx-"), strings.HasPrefix(key, "sse-"):
			problems = append(problems, fmt.Sprintf("<%s %s>: htmx attribute", tag, key))
		case key == "href" && !safeHref(a.Val):
			problems = append(problems, fmt.Sprintf("<%s href=%q>: scheme not allowed", tag, a.Val))
		}
		if check, ok := allowed[key]; !ok || !check(a.Val) {
			problems = append(problems, fmt.Sprintf("<%s %s=%q> is not allowed", tag, key, a.Val))
		}
	}
	switch tag {
	case "a":
		if !has["href"] || !has["rel"] || !has["target"] {
			problems = append(problems, fmt.Sprintf("<a> without href, rel and target: %v", n.Attr))
		}
	case "input":
		if !has["disabled"] {
			problems = append(problems, "a checkbox that is not disabled")
		}
	}
	return problems
}

func assertSafe(t *testing.T, what, out string) {
	t.Helper()
	for _, p := range unsafeParts(out) {
		t.Errorf("%s: %s\noutput: %s", what, p, out)
	}
}

// The checker itself has to be able to say no.
func TestSafetyCheckCanFail(t *testing.T) {
	for _, bad := range []string{
		`<script>x</script>`,
		`<img src="x">`,
		`<p onclick="x">a</p>`,
		`<p style="color:red">a</p>`,
		`<div hx-get="/x" class="code-block">a</div>`,
		`<div data-hx-get="/x" class="code-block">a</div>`,
		`<span sse-connect="/x" class="code-lang">a</span>`,
		`<a href="javascript:alert(1)" rel="noopener noreferrer nofollow" target="_blank">a</a>`,
		`<a href="/files/x" rel="noopener noreferrer nofollow" target="_blank">a</a>`,
		`<a href="https://x">a</a>`,
		`<span class="evil">a</span>`,
		`<input type="checkbox">`,
		`<svg><circle/></svg>`,
		`<!-- x -->`,
		`<h1>a</h1>`,
	} {
		if len(unsafeParts(bad)) == 0 {
			t.Errorf("passed: %s", bad)
		}
	}
	good := `<p>a <a href="https://x.test/a?b=1" rel="noopener noreferrer nofollow" target="_blank">b</a></p>` +
		`<div class="code-block" data-lang="go"><div class="code-head"><span class="code-lang">go</span>` +
		`<button type="button" class="code-copy" data-copy="">Copy</button></div>` +
		`<pre class="chroma"><code><span class="c-kd">func</span></code></pre></div>` +
		`<ul><li><input type="checkbox" checked="" disabled="">x</li></ul>`
	if p := unsafeParts(good); len(p) != 0 {
		t.Errorf("good output flagged: %v", p)
	}
}
