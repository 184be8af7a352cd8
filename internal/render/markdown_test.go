package render

import (
	"fmt"
	"html/template"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/chroma/v2/lexers"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// oneLine drops the newlines goldmark puts between tags, so expectations
// can be written on one line.
func oneLine(s string) string {
	return strings.ReplaceAll(s, "\n", "")
}

func TestGFM(t *testing.T) {
	const link = ` rel="noopener noreferrer nofollow" target="_blank"`
	for _, c := range []struct{ name, src, want string }{
		{"table", "| a | b |\n|---|---|\n| 1 | 2 |",
			"<table><thead><tr><th>a</th><th>b</th></tr></thead><tbody><tr><td>1</td><td>2</td></tr></tbody></table>"},
		{"table alignment as attributes, never style", "| l | c | r |\n|:--|:-:|--:|\n| 1 | 2 | 3 |",
			`<table><thead><tr><th align="left">l</th><th align="center">c</th><th align="right">r</th></tr></thead>` +
				`<tbody><tr><td align="left">1</td><td align="center">2</td><td align="right">3</td></tr></tbody></table>`},
		{"table with escaped pipe and inlines", "| a | b |\n|---|---|\n| `x\\|y` | **b** |",
			"<table><thead><tr><th>a</th><th>b</th></tr></thead><tbody><tr><td><code>x|y</code></td><td><strong>b</strong></td></tr></tbody></table>"},
		{"table without outer pipes, short row", "a | b\n--|--\n1 | 2\n3",
			"<table><thead><tr><th>a</th><th>b</th></tr></thead><tbody><tr><td>1</td><td>2</td></tr><tr><td>3</td><td></td></tr></tbody></table>"},
		{"table header only", "| a |\n|---|", "<table><thead><tr><th>a</th></tr></thead></table>"},
		{"not a table", "a | b\nno delimiter row", "<p>a | bno delimiter row</p>"},
		{"strikethrough", "~~gone~~ and ~also~", "<p><del>gone</del> and <del>also</del></p>"},
		{"task list", "- [ ] todo\n- [x] done",
			`<ul><li><input type="checkbox" disabled="">todo</li><li><input type="checkbox" checked="" disabled="">done</li></ul>`},
		{"loose task list", "- [ ] a\n\n- [X] b",
			`<ul><li><p><input type="checkbox" disabled="">a</p></li><li><p><input type="checkbox" checked="" disabled="">b</p></li></ul>`},
		{"linkify", "https://x.test/p?q=1. www.y.test, z@w.test",
			`<p><a href="https://x.test/p?q=1"` + link + `>https://x.test/p?q=1</a>. <a href="http://www.y.test"` + link +
				`>www.y.test</a>, <a href="mailto:z@w.test"` + link + `>z@w.test</a></p>`},
		{"headings demoted", "# One\n## Two\n### Three\n#### Four\n##### Five\n###### Six",
			"<h3>One</h3><h4>Two</h4><h5>Three</h5><h6>Four</h6><h6>Five</h6><h6>Six</h6>"},
		{"setext demoted", "One\n===\nTwo\n---", "<h3>One</h3><h4>Two</h4>"},
		{"ordered list start", "3. c\n4. d", `<ol start="3"><li>c</li><li>d</li></ol>`},
		{"blockquote and rule", "> q\n\n---", "<blockquote><p>q</p></blockquote><hr>"},
		{"emphasis and code", "*a* **b** `<c>`", "<p><em>a</em> <strong>b</strong> <code>&lt;c&gt;</code></p>"},
		{"hard break", "a  \nb", "<p>a<br>b</p>"},
		{"no heading ids, no attribute syntax", "## Title {#id .cls onclick=x}", "<h4>Title {#id .cls onclick=x}</h4>"},
		{"entities stay text", "&lt;b&gt; &amp; &copy;", "<p>&lt;b&gt; &amp; ©</p>"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Markdown(c.src)
			if oneLine(got) != c.want {
				t.Errorf("%q:\n got %s\nwant %s", c.src, oneLine(got), c.want)
			}
			assertSafe(t, c.src, got)
		})
	}
}

func TestCodeBlockMarkup(t *testing.T) {
	const head = `<div class="code-head"><span class="code-lang">%s</span><button type="button" class="code-copy" data-copy="">Copy</button></div>`
	wrap := func(attrs, label, code string) string {
		return `<div class="code-block"` + attrs + `>` + strings.Replace(head, "%s", label, 1) +
			`<pre class="chroma"><code>` + code + `</code></pre></div>`
	}
	for _, c := range []struct{ name, src, want string }{
		{"highlighted", "```go\nx := 1\n```",
			wrap(` data-lang="go"`, "go", `x <span class="c-o">:=</span> <span class="c-mi">1</span>`+"\n")},
		{"no language", "```\n<b>x</b>\n```", wrap("", "text", "&lt;b&gt;x&lt;/b&gt;\n")},
		{"unknown language is plain", "```nosuchlang\na < b\n```", wrap(` data-lang="nosuchlang"`, "nosuchlang", "a &lt; b\n")},
		{"info after the language is ignored", "```python title=x\npass\n```",
			wrap(` data-lang="python"`, "python", `<span class="c-k">pass</span>`+"\n")},
		{"language that is not a name", "```a\"b\nx\n```", wrap("", "text", "x\n")},
		{"indented", "    a && b", wrap("", "text", "a &amp;&amp; b\n")},
		{"tilde fence", "~~~sh\n~~~", wrap(` data-lang="sh"`, "sh", "")},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := oneLine(Markdown(c.src)); got != oneLine(c.want) {
				t.Errorf("%q:\n got %s\nwant %s", c.src, got, oneLine(c.want))
			}
		})
	}
}

// The fence renderer is replaced, not configured: a highlighter wrapping
// its own <pre> inside ours was the original's bug. Each code block is one
// wrapper holding exactly one <pre>, and no <pre> holds another.
func TestNoNestedPre(t *testing.T) {
	srcs := []string{
		"```go\nfunc main() {}\n```",
		"```\nplain\n```",
		"```nosuchlang\nx\n```",
		"    indented",
		"- item\n\n  ```py\n  print(1)\n  ```",
		"> ```js\n> let x\n> ```",
		"```html\n<pre><code>inner</code></pre>\n```",
		"````md\n```go\nx\n```\n````",
	}
	for _, src := range srcs {
		out := Markdown(src)
		nodes, err := html.ParseFragment(strings.NewReader(out), &html.Node{Type: html.ElementNode, DataAtom: atom.Div, Data: "div"})
		if err != nil {
			t.Fatal(err)
		}
		blocks, pres := 0, 0
		var walk func(n *html.Node, inPre bool)
		walk = func(n *html.Node, inPre bool) {
			if n.Type == html.ElementNode {
				switch {
				case n.Data == "pre":
					pres++
					if inPre {
						t.Errorf("%q: <pre> inside <pre>: %s", src, out)
					}
					inPre = true
				case n.Data == "div" && classOf(n) == "code-block":
					blocks++
				}
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				walk(c, inPre)
			}
		}
		for _, n := range nodes {
			walk(n, false)
		}
		if blocks != 1 || pres != 1 {
			t.Errorf("%q: %d code blocks and %d <pre>, want one of each: %s", src, blocks, pres, out)
		}
	}
}

func classOf(n *html.Node) string {
	for _, a := range n.Attr {
		if a.Key == "class" {
			return a.Val
		}
	}
	return ""
}

// A huge block is shown plain rather than handed to a lexer.
func TestHugeCodeBlockIsPlain(t *testing.T) {
	code := strings.Repeat("x := 1\n", maxHighlight/7+1)
	out := Markdown("```go\n" + code + "```")
	if strings.Contains(out, `class="c-`) {
		t.Error("a block over the limit was highlighted")
	}
	if !strings.Contains(out, `data-lang="go"`) {
		t.Error("the language label was lost")
	}
}

func TestHTMLIsMarkdown(t *testing.T) {
	src := "# Hi <script>\n\n*there*"
	if got := HTML(src); got != template.HTML(Markdown(src)) {
		t.Errorf("HTML = %q", got)
	}
	if got := ReasoningHTML(src); got != Markdown(src) {
		t.Errorf("ReasoningHTML = %q", got)
	}
}

func TestFallbackIsEscaped(t *testing.T) {
	got := fallback("a <b>\nc & d\n")
	if want := "<p>a &lt;b&gt;<br>\nc &amp; d</p>\n"; got != want {
		t.Errorf("fallback = %q, want %q", got, want)
	}
	if fallback(" \n") != "" {
		t.Error("blank fallback is not empty")
	}
}

// Markdown shares one goldmark instance and one policy across goroutines;
// under -race this shows they hold no state of their own between calls.
func TestMarkdownConcurrent(t *testing.T) {
	srcs := append([]string{}, blocks...)
	srcs = append(srcs, hostile...)
	want := make([]string, len(srcs))
	for i, s := range srcs {
		want[i] = Markdown(s)
	}
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range srcs {
				k := (i + g*7) % len(srcs)
				if got := Markdown(srcs[k]); got != want[k] {
					t.Errorf("%q rendered differently under concurrency", srcs[k])
				}
			}
		}()
	}
	for range 4 {
		<-done
	}
}

// Our lexer index finds what chroma's own lookup finds for the names
// models write, and a miss costs a map lookup, not a scan of every lexer.
func TestLexerIndex(t *testing.T) {
	for _, name := range []string{"go", "golang", "Go", "python", "py", "python3", "js", "javascript", "ts",
		"typescript", "tsx", "jsx", "sh", "bash", "shell", "zsh", "console", "json", "yaml", "yml", "html",
		"css", "scss", "sql", "rust", "rs", "c", "cpp", "c++", "h", "java", "kotlin", "kt", "swift", "rb",
		"ruby", "php", "diff", "patch", "dockerfile", "docker", "makefile", "make", "toml", "ini", "xml",
		"md", "markdown", "text", "plaintext", "txt", "lua", "r", "cs", "csharp", "hs", "haskell", "nix",
		"ps1", "powershell", "vue", "svelte", "graphql", "proto", "protobuf", "terraform", "hcl", "zig",
		"elixir", "ex", "erlang", "clojure", "scala", "dart", "perl", "pl", "asm", "nasm", "latex", "tex"} {
		want := lexers.Get(name)
		got := lexerIndex()[strings.ToLower(name)]
		switch {
		case want == nil && got == nil:
		case want == nil || got == nil:
			t.Errorf("%s: index %v, chroma %v", name, got != nil, want != nil)
		case got.Config().Name != want.Config().Name:
			t.Errorf("%s: index finds %s, chroma %s", name, got.Config().Name, want.Config().Name)
		}
	}
	start := time.Now()
	for i := range 1000 {
		highlight(fmt.Sprintf("madeup%d", i), "x := 1\n")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("1000 unknown languages took %v", d)
	}
}

// goldmark's inline parser is quadratic on a paragraph of repeated "[a](";
// past maxInlineText a paragraph is shown as plain text instead of taking
// seconds.
func TestLongParagraphIsText(t *testing.T) {
	evil := strings.Repeat("[a](", 20_000)
	start := time.Now()
	out := Markdown("before\n\n" + evil + "\n\n*after*")
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("80 KB of \"[a](\" took %v", d)
	}
	if want := "<p>before</p>\n<p>" + evil + "</p>\n<p><em>after</em></p>\n"; out != want {
		t.Errorf("long paragraph not shown as text: %.200q", out)
	}
	// Under the limit a paragraph is parsed as usual.
	prose := strings.Repeat("word *em* ", maxInlineText/12)
	if got := Markdown(prose); !strings.Contains(got, "<em>em</em>") {
		t.Error("a paragraph under the limit was not parsed")
	}
	// In a list or a quote too, and a long table stays a table.
	if got := Markdown("> " + evil); !strings.HasPrefix(got, "<blockquote>\n<p>[a](") {
		t.Errorf("quoted: %.80q", got)
	}
	table := "| a | b |\n|---|---|\n" + strings.Repeat("| x | y |\n", maxInlineText/10+10)
	if got := Markdown(table); !strings.HasPrefix(got, "<table>") {
		t.Errorf("long table: %.80q", got)
	}
	// A heading or a table row that long is text too, and quick.
	for _, src := range []string{"# " + evil, "| a |\n|---|\n| " + evil + " |"} {
		start := time.Now()
		got := Markdown(src)
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%.20q took %v", src, d)
		}
		if !strings.HasPrefix(got, "<p>") {
			t.Errorf("%.20q: %.80q", src, got)
		}
	}
}
