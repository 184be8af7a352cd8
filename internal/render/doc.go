// Package render is the only place where untrusted text becomes HTML.
//
// Model output, reasoning, tool results and anything else a person or a
// model wrote reach a page either through html/template's escaping or
// through this package: Markdown (goldmark with the GFM extensions) is
// rendered by our own renderers for every node where text meets an
// attribute or a code block, and the result always goes through a strict
// bluemonday allow-list afterwards. This is the one package allowed to
// make a template.HTML (HTML does, for templates).
//
// What the package refuses to do:
//
//   - emit raw HTML: HTML written in Markdown is shown as text;
//   - load anything: an image becomes a link to its URL (http and https
//     only), never an <img>;
//   - link anywhere but http, https and mailto; every link opens in a new
//     tab with rel="noopener noreferrer nofollow";
//   - emit inline styles, ids, event handlers, htmx attributes or data-*
//     attributes other than the two it places itself (data-lang on a code
//     block, data-copy on its Copy button).
//
// Headings are demoted by two levels (# becomes <h3>, ## becomes <h4>, the
// rest <h5> and <h6>), so a reply never competes with the page's own
// headings; code.css sizes them one step above the prose.
//
// Output is meant to sit inside an element with class "prose", which is
// where code.css scopes its rules for reply elements.
//
// Stream renders a reply while it is being written without re-rendering
// what is already finished; see its documentation for what "finished"
// means and where the live view may differ from the final one.
package render
