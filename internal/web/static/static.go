// Package static holds the browser files LLeMbas serves: styles, scripts,
// images and vendored libraries. Nothing here is built; what is committed
// is what is served.
package static

import "embed"

// FS is every static file, by path relative to this folder.
//
//go:embed css js vendor img
var FS embed.FS
