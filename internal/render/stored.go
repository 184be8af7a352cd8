package render

import "html/template"

// Stored marks HTML for a template that this package produced earlier:
// a reply's final render, stored once when the reply finished, or a live
// frame from a Stream. It must never be given anything else. It exists so
// a stored reply is not rendered again on every page view, and so
// template.HTML stays inside this package.
func Stored(html string) template.HTML {
	return template.HTML(html) // #nosec: only this package's own output
}
