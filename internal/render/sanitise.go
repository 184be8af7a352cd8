package render

import (
	"regexp"

	"github.com/microcosm-cc/bluemonday"
)

// policy is the allow-list every rendered byte passes through. It is built
// once and never changed after (bluemonday policies are safe for
// concurrent use once built).
var policy = newPolicy()

// newPolicy allows the elements our renderers emit and nothing else, each
// with the attributes they emit and with values matching what they emit:
//
//   - prose: p, br, hr, em, strong, del, code, blockquote, lists (ol with
//     a numeric start), tables (th and td with align left, center or
//     right), and h3–h6 (headings are demoted, so h1 and h2 never occur);
//   - links: a with an absolute http, https or mailto href, a title,
//     target="_blank" and rel="noopener noreferrer nofollow" (which the
//     policy also enforces itself);
//   - task lists: input with type="checkbox", checked and disabled;
//   - code blocks: div.code-block with data-lang, div.code-head,
//     span.code-lang, button.code-copy of type button with data-copy,
//     pre.chroma, and spans with chroma's namespaced token classes.
//
// No style, id, on*, hx-*, sse-* or other data-* attribute, no class
// outside those above, no element outside that list (<img>, <svg>,
// <iframe>, <script> and <style> included, with the content of the last
// two dropped), no comments.
func newPolicy() *bluemonday.Policy {
	p := bluemonday.NewPolicy()
	p.AllowElements("p", "br", "hr", "em", "strong", "del", "code", "pre",
		"blockquote", "ul", "ol", "li", "table", "thead", "tbody", "tr", "th", "td",
		"h3", "h4", "h5", "h6")
	p.AllowAttrs("start").Matching(regexp.MustCompile(`^[0-9]{1,9}$`)).OnElements("ol")
	p.AllowAttrs("align").Matching(regexp.MustCompile(`^(left|center|right)$`)).OnElements("th", "td")

	p.AllowAttrs("href").OnElements("a")
	p.AllowURLSchemes("http", "https", "mailto")
	p.RequireParseableURLs(true)
	p.AllowRelativeURLs(false)
	p.RequireNoFollowOnLinks(true)
	p.RequireNoReferrerOnLinks(true)
	p.AllowAttrs("rel").Matching(regexp.MustCompile(`^noopener noreferrer nofollow$`)).OnElements("a")
	p.AllowAttrs("target").Matching(regexp.MustCompile(`^_blank$`)).OnElements("a")
	p.AllowAttrs("title").OnElements("a")

	p.AllowAttrs("type").Matching(regexp.MustCompile(`^checkbox$`)).OnElements("input")
	p.AllowAttrs("checked", "disabled").Matching(regexp.MustCompile(`^$`)).OnElements("input")

	p.AllowAttrs("class").Matching(regexp.MustCompile(`^code-(block|head)$`)).OnElements("div")
	p.AllowAttrs("data-lang").Matching(langPattern).OnElements("div")
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^(code-lang|` + tokenClassPrefix + `[a-z0-9]{1,3})$`)).OnElements("span")
	p.AllowAttrs("type").Matching(regexp.MustCompile(`^button$`)).OnElements("button")
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^code-copy$`)).OnElements("button")
	p.AllowAttrs("data-copy").Matching(regexp.MustCompile(`^$`)).OnElements("button")
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^chroma$`)).OnElements("pre")
	return p
}

// sanitise runs rendered HTML through the policy.
func sanitise(b []byte) string {
	return string(policy.SanitizeBytes(b))
}
