package render

import (
	"strings"
	"testing"
)

// hostile is text a model (or whoever steers one) might write to get
// script, a request or an image into the page. Every sample is rendered
// whole and streamed split at every byte.
var hostile = []string{
	"<script>alert(1)</script>",
	"before <script>alert(1)</script> after",
	"<img src=x onerror=alert(1)>",
	"text <img src=x onerror=alert(1)> inline",
	"[a](javascript:alert(1))",
	"[a](JaVaScRiPt:alert(1))",
	"[a](&#106;avascript:alert(1))",
	"[a](&#x6A;avascript:alert(1))",
	"[a](java&#x09;script:alert(1))",
	"[a](<javascript:alert(1)>)",
	"[a]( javascript:alert(1) )",
	"<javascript:alert(1)>",
	"<JAVASCRIPT:alert(1)>",
	"<svg onload=alert(1)>",
	"<svg><script>alert(1)</script></svg>",
	"<details open ontoggle=alert(1)>x</details>",
	"<iframe src=\"https://evil.test/\"></iframe>",
	"<a href=\"data:text/html,<script>alert(1)</script>\">x</a>",
	"[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
	"![x](http://evil/x.png)",
	"![x](/files/abc)",
	"![x](data:image/png;base64,iVBORw0KGgo=)",
	"![](https://evil.test/pixel.gif)",
	"![x](javascript:alert(1))",
	"[![x](https://evil.test/x.png)](https://ok.test/)",
	"[![x](https://evil.test/x.png)](javascript:alert(1))",
	"[x](vbscript:msgbox(1))",
	"[x](file:///etc/passwd)",
	"[x](//evil.test/x)",
	"[x](/api/admin/delete)",
	"<div hx-get=\"/api/x\" hx-trigger=\"load\">x</div>",
	"<div hx-post=\"/api/x\" hx-trigger=\"load\">x</div>",
	"<div hx-sse:connect=\"/api/stream\">x</div>",
	"<div data-hx-get=\"/api/x\">x</div>",
	"<span sse-connect=\"/api/stream\" sse-swap=\"x\">x</span>",
	"inline <b hx-get=\"/api/x\" hx-trigger=\"load\">x</b> and <i data-hx-post=\"/x\">y</i>",
	"<p style=\"position:fixed;inset:0\">cover</p>",
	"<a href=\"https://ok.test\" onclick=\"alert(1)\" style=\"x\">ok</a>",
	"[a](https://ok.test \"t\\\" onmouseover=\\\"alert(1)\")",
	"[a](https://ok.test \"t\" onmouseover=\"alert(1)\")",
	"<style>body{display:none}</style>",
	"<object data=\"x\"></object><embed src=\"x\">",
	"<math><mi xlink:href=\"javascript:alert(1)\">x</mi></math>",
	"<form action=\"javascript:alert(1)\"><button>x</button></form>",
	"<button class=\"code-copy\" data-copy onclick=\"alert(1)\">Copy</button>",
	"<div class=\"code-block\" data-lang=\"x\" data-hx-get=\"/x\">x</div>",
	"```go\" onload=\"alert(1)\nx := 1\n```",
	"```\"><script>alert(1)</script>\ncode\n```",
	"```<img/src/onerror=alert(1)>\ncode\n```",
	"~~~ javascript:alert(1)\ncode\n~~~",
	"```js\n</code></pre><script>alert(1)</script>\n```",
	"    <script>alert(1)</script>",
	"`<script>alert(1)</script>`",
	"<!-- <script>alert(1)</script> -->",
	"[x]: javascript:alert(1)\n\n[x] and [y]\n\n[y]: https://ok.test/",
	"[x]\n\n[x]: javascript:alert(1)",
	"www.evil.test/<script>alert(1)</script>",
	"https://evil.test/\"onmouseover=\"alert(1)",
	"<https://evil.test/\" onmouseover=\"alert(1)>",
	"mailto:a@b.test?body=<script>",
	"| <script>alert(1)</script> | x |\n|---|---|\n| <img src=x onerror=alert(1)> | [a](javascript:x) |",
	"- [ ] <input type=text autofocus onfocus=alert(1)>\n- [x] done",
	"> <iframe src=x></iframe>\n> ![x](http://evil/x.png)",
	"1. <svg onload=alert(1)>\n   ```html\n   <script>alert(1)</script>\n   ```",
	"<scr<script>ipt>alert(1)</script>",
	"<a href=\"jav&#x0A;ascript:alert(1)\">x</a>",
	"[x](jav\tascript:alert(1))",
	"<base href=\"https://evil.test/\"><meta http-equiv=\"refresh\" content=\"0;url=https://evil.test\">",
	"<template><script>alert(1)</script></template>",
	"<noscript><p title=\"</noscript><img src=x onerror=alert(1)>\"></noscript>",
	"<video><source onerror=alert(1)></video>",
	"# <script>alert(1)</script>\n\nSetext <img src=x>\n===",
	"**<a href=javascript:alert(1)>bold</a>**",
	"<br onclick=alert(1)> and <br/> and <br>",
}

func TestHostileMarkdown(t *testing.T) {
	for _, src := range hostile {
		assertSafe(t, src, Markdown(src))
		assertSafe(t, src, ReasoningHTML(src))
		assertSafe(t, src, string(HTML(src)))
	}
}

func TestHostileStreamEverySplit(t *testing.T) {
	for _, src := range hostile {
		want := Markdown(src)
		for i := 0; i <= len(src); i++ {
			var s Stream
			s.Append(src[:i])
			assertSafe(t, src+" (first part)", s.HTML())
			s.Append(src[i:])
			assertSafe(t, src+" (whole)", s.HTML())
			if got := s.Final(); got != want {
				t.Errorf("%q split at %d: Final differs from Markdown:\n got %s\nwant %s", src, i, got, want)
			}
		}
	}
}

// The whole corpus as one reply, streamed in small pieces with a frame
// after each, as the reply engine does.
func TestHostileStreamAsOneReply(t *testing.T) {
	src := strings.Join(hostile, "\n\n")
	for _, size := range []int{1, 3, 7, 16} {
		var s Stream
		for i := 0; i < len(src); i += size {
			s.Append(src[i:min(i+size, len(src))])
			if out := s.HTML(); len(unsafeParts(out)) > 0 {
				assertSafe(t, "streamed corpus", out)
				return
			}
		}
		assertSafe(t, "streamed corpus, final", s.Final())
	}
}

func TestImagesNeverLoad(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"![x](http://evil/x.png)", `<p><a href="http://evil/x.png" rel="noopener noreferrer nofollow" target="_blank">x</a></p>` + "\n"},
		{"![a *b*](https://x.test/i.png \"t\")", `<p><a href="https://x.test/i.png" title="t" rel="noopener noreferrer nofollow" target="_blank">a b</a></p>` + "\n"},
		{"![](https://x.test/i.png)", `<p><a href="https://x.test/i.png" rel="noopener noreferrer nofollow" target="_blank">https://x.test/i.png</a></p>` + "\n"},
		{"![x](/files/abc)", "<p>x</p>\n"},
		{"![x](data:image/png;base64,AAAA)", "<p>x</p>\n"},
		{"![x](mailto:a@b.test)", "<p>x</p>\n"},
		{"[![x](https://i.test/x.png)](https://ok.test/)", `<p><a href="https://ok.test/" rel="noopener noreferrer nofollow" target="_blank">x</a></p>` + "\n"},
		{"![<b>x</b> &amp; y](https://i.test/)", `<p><a href="https://i.test/" rel="noopener noreferrer nofollow" target="_blank">x &amp; y</a></p>` + "\n"},
	} {
		if got := Markdown(c.src); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.src, got, c.want)
		}
	}
}

func TestLinks(t *testing.T) {
	const attrs = ` rel="noopener noreferrer nofollow" target="_blank"`
	for _, c := range []struct{ src, want string }{
		{"[a](https://x.test/p?q=1&r=2)", `<p><a href="https://x.test/p?q=1&amp;r=2"` + attrs + `>a</a></p>`},
		{"[a](HTTP://X.test/)", `<p><a href="http://X.test/"` + attrs + `>a</a></p>`},
		{"[a](mailto:me@x.test)", `<p><a href="mailto:me@x.test"` + attrs + `>a</a></p>`},
		{"<https://x.test/a>", `<p><a href="https://x.test/a"` + attrs + `>https://x.test/a</a></p>`},
		{"see www.x.test/a.", `<p>see <a href="http://www.x.test/a"` + attrs + `>www.x.test/a</a>.</p>`},
		{"write to me@x.test", `<p>write to <a href="mailto:me@x.test"` + attrs + `>me@x.test</a></p>`},
		{"[a *b*](javascript:alert(1))", `<p>a <em>b</em></p>`},
		{"[a](/relative)", `<p>a</p>`},
		{"[a](#frag)", `<p>a</p>`},
		{"[a](ftp://x.test/)", `<p>a</p>`},
		{"<ftp://x.test/>", `<p>ftp://x.test/</p>`},
	} {
		if got := strings.TrimSpace(Markdown(c.src)); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.src, got, c.want)
		}
	}
}

func TestRawHTMLIsText(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"Vec<T> and <b>bold</b>", "<p>Vec&lt;T&gt; and &lt;b&gt;bold&lt;/b&gt;</p>"},
		{"a<br>b<br/>c<BR />d", "<p>a<br>b<br>c<br>d</p>"},
		{"<div>\nhello\n</div>", "<p>&lt;div&gt;<br>\nhello<br>\n&lt;/div&gt;</p>"},
		{"<br onclick=x>", "<p>&lt;br onclick=x&gt;</p>"},
	} {
		if got := strings.TrimSpace(Markdown(c.src)); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.src, got, c.want)
		}
	}
}
