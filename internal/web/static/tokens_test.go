package static

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The themes live in css/tokens.css as custom properties; app.css only
// refers to them. These tests read both files the way a browser would
// (enough of it, anyway): they resolve each theme's tokens, check that the
// text colours app.css puts on each surface can be read, and check that
// app.css holds no values of its own.

// cssRule is one style rule: its selectors and declarations, and the
// at-rule it sits in ("" at the top level).
type cssRule struct {
	selectors []string
	decls     []cssDecl
	within    string
}

type cssDecl struct{ prop, value string }

var cssComment = regexp.MustCompile(`(?s)/\*.*?\*/`)

// parseCSS splits a stylesheet into rules, descending into block at-rules
// (@media, @supports, @keyframes). It is not a full CSS parser; it handles
// what our two files contain and reports anything unbalanced.
func parseCSS(src string) ([]cssRule, error) {
	return parseBlock(cssComment.ReplaceAllString(src, ""), "")
}

func parseBlock(src, within string) ([]cssRule, error) {
	var rules []cssRule
	for {
		src = strings.TrimSpace(src)
		if src == "" {
			return rules, nil
		}
		open := strings.IndexAny(src, "{;}")
		if open < 0 {
			return nil, fmt.Errorf("unterminated text %q", clip(src))
		}
		if src[open] == ';' { // a statement at-rule such as @import
			src = src[open+1:]
			continue
		}
		if src[open] == '}' {
			return nil, fmt.Errorf("unbalanced } near %q", clip(src))
		}
		prelude := strings.TrimSpace(src[:open])
		end, err := matchingBrace(src, open)
		if err != nil {
			return nil, err
		}
		body := src[open+1 : end]
		src = src[end+1:]
		if strings.HasPrefix(prelude, "@") {
			inner, err := parseBlock(body, prelude)
			if err != nil {
				return nil, err
			}
			rules = append(rules, inner...)
			continue
		}
		r := cssRule{within: within}
		for _, s := range splitTop(prelude, ',') {
			r.selectors = append(r.selectors, normSelector(s))
		}
		for _, d := range splitTop(body, ';') {
			d = strings.TrimSpace(d)
			if d == "" {
				continue
			}
			prop, value, ok := strings.Cut(d, ":")
			if !ok {
				return nil, fmt.Errorf("declaration without a colon: %q", clip(d))
			}
			r.decls = append(r.decls, cssDecl{strings.TrimSpace(prop), strings.TrimSpace(value)})
		}
		rules = append(rules, r)
	}
}

func matchingBrace(s string, open int) (int, error) {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i, nil
			}
		}
	}
	return 0, fmt.Errorf("unclosed { after %q", clip(s[:open]))
}

// splitTop splits s on sep where sep is outside parentheses and quotes.
func splitTop(s string, sep byte) []string {
	var parts []string
	depth, start := 0, 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == sep && depth == 0:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

func normSelector(s string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "'", `"`)
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// ---------- Themes ----------

// A theme's tokens: moria is every top-level rule matching bare :root (or
// naming moria), in order; shire is moria with the shire rule on top, as
// the cascade gives it (the shire selectors are more specific than :root).
func matchesMoria(sel string) bool {
	return sel == ":root" || sel == `:root[data-theme="moria"]`
}

func matchesShire(sel string) bool {
	return sel == `:root[data-theme="shire"]` || sel == `:root[data-base="shire"]`
}

func themeTokens(rules []cssRule, theme string) map[string]string {
	tokens := map[string]string{}
	apply := func(match func(string) bool) {
		for _, r := range rules {
			if r.within != "" || !anySelector(r.selectors, match) {
				continue
			}
			for _, d := range r.decls {
				if strings.HasPrefix(d.prop, "--") {
					tokens[d.prop] = d.value
				}
			}
		}
	}
	apply(matchesMoria)
	if theme == "shire" {
		apply(matchesShire)
	}
	return tokens
}

func anySelector(sels []string, match func(string) bool) bool {
	for _, s := range sels {
		if match(s) {
			return true
		}
	}
	return false
}

// resolve replaces every var(--name[, fallback]) in value with the token's
// own resolved value.
func resolve(tokens map[string]string, value string, depth int) (string, error) {
	if depth > 20 {
		return "", errors.New("var() references loop")
	}
	for {
		i := strings.Index(value, "var(")
		if i < 0 {
			return value, nil
		}
		j, err := matchingParen(value, i+len("var"))
		if err != nil {
			return "", err
		}
		args := splitTop(value[i+len("var("):j], ',')
		name := strings.TrimSpace(args[0])
		raw, ok := tokens[name]
		if !ok {
			if len(args) < 2 {
				return "", fmt.Errorf("%s is not defined", name)
			}
			raw = strings.TrimSpace(strings.Join(args[1:], ","))
		}
		got, err := resolve(tokens, raw, depth+1)
		if err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		value = value[:i] + got + value[j+1:]
	}
}

func matchingParen(s string, open int) (int, error) {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i, nil
			}
		}
	}
	return 0, fmt.Errorf("unclosed ( in %q", clip(s))
}

// rgba is a colour with gamma-encoded sRGB channels and alpha, all 0..1.
type rgba struct{ r, g, b, a float64 }

var hexColour = regexp.MustCompile(`^#([0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$`)

// parseColour reads the colour forms tokens.css uses: #rgb, #rgba,
// #rrggbb, #rrggbbaa, transparent, and color-mix(in srgb, A p%, B q%).
func parseColour(s string) (rgba, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	switch {
	case s == "transparent":
		return rgba{}, nil
	case hexColour.MatchString(s):
		h := s[1:]
		if len(h) <= 4 {
			var b strings.Builder
			for _, c := range h {
				b.WriteRune(c)
				b.WriteRune(c)
			}
			h = b.String()
		}
		if len(h) == 6 {
			h += "ff"
		}
		var ch [4]float64
		for k := range ch {
			v, _ := strconv.ParseUint(h[2*k:2*k+2], 16, 8)
			ch[k] = float64(v) / 255
		}
		return rgba{ch[0], ch[1], ch[2], ch[3]}, nil
	case strings.HasPrefix(s, "color-mix(") && strings.HasSuffix(s, ")"):
		return parseMix(s[len("color-mix(") : len(s)-1])
	}
	return rgba{}, fmt.Errorf("not a colour this test reads: %q", s)
}

func parseMix(args string) (rgba, error) {
	parts := splitTop(args, ',')
	if len(parts) != 3 || strings.Join(strings.Fields(parts[0]), " ") != "in srgb" {
		return rgba{}, fmt.Errorf("color-mix(%s): only two colours in srgb are read", args)
	}
	var cols [2]rgba
	var pcts [2]float64
	var given [2]bool
	for k, p := range parts[1:] {
		p = strings.TrimSpace(p)
		colour := p
		// A percentage, if any, is the last space-separated word.
		if sp := strings.LastIndexByte(p, ' '); sp > 0 && strings.HasSuffix(p, "%") && !strings.HasSuffix(p[:sp], ",") {
			v, err := strconv.ParseFloat(p[sp+1:len(p)-1], 64)
			if err == nil {
				pcts[k], given[k] = v/100, true
				colour = strings.TrimSpace(p[:sp])
			}
		}
		c, err := parseColour(colour)
		if err != nil {
			return rgba{}, err
		}
		cols[k] = c
	}
	switch {
	case given[0] && !given[1]:
		pcts[1] = 1 - pcts[0]
	case given[1] && !given[0]:
		pcts[0] = 1 - pcts[1]
	case !given[0] && !given[1]:
		pcts = [2]float64{0.5, 0.5}
	}
	sum := pcts[0] + pcts[1]
	if sum <= 0 {
		return rgba{}, fmt.Errorf("color-mix(%s): percentages add to zero", args)
	}
	p, q := pcts[0]/sum, pcts[1]/sum
	// Mixing is done on premultiplied channels, as CSS does.
	a := cols[0].a*p + cols[1].a*q
	if a == 0 {
		return rgba{}, nil
	}
	mix := func(x, y float64) float64 { return (x*cols[0].a*p + y*cols[1].a*q) / a }
	return rgba{mix(cols[0].r, cols[1].r), mix(cols[0].g, cols[1].g), mix(cols[0].b, cols[1].b), a}, nil
}

// luminance is WCAG 2's relative luminance of an opaque colour.
func luminance(c rgba) float64 {
	lin := func(v float64) float64 {
		if v <= 0.04045 {
			return v / 12.92
		}
		return math.Pow((v+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(c.r) + 0.7152*lin(c.g) + 0.0722*lin(c.b)
}

// contrast is the WCAG contrast ratio of text fg on surface bg. A
// translucent fg is composited onto bg first; a translucent surface is an
// error, since what shows through it is not known here.
func contrast(fg, bg rgba) (float64, error) {
	if bg.a < 1 {
		return 0, errors.New("the surface is not opaque")
	}
	if fg.a < 1 {
		fg = rgba{fg.r*fg.a + bg.r*(1-fg.a), fg.g*fg.a + bg.g*(1-fg.a), fg.b*fg.a + bg.b*(1-fg.a), 1}
	}
	l1, l2 := luminance(fg), luminance(bg)
	if l1 < l2 {
		l1, l2 = l2, l1
	}
	return (l1 + 0.05) / (l2 + 0.05), nil
}

// pairContrast resolves two tokens of a theme and returns their ratio.
func pairContrast(tokens map[string]string, fg, bg string) (float64, error) {
	var cols [2]rgba
	for k, name := range []string{fg, bg} {
		v, err := resolve(tokens, "var("+name+")", 0)
		if err != nil {
			return 0, err
		}
		if cols[k], err = parseColour(v); err != nil {
			return 0, fmt.Errorf("%s: %w", name, err)
		}
	}
	return contrast(cols[0], cols[1])
}

// surfaces is every background text can sit on.
var surfaces = []string{"--bg", "--surface-1", "--surface-2", "--surface-3", "--field"}

// textPairs is every text colour app.css uses, with every surface it can
// be drawn on. A new text colour or surface in app.css belongs here.
var textPairs = []struct {
	fg  string
	bgs []string
	why string
}{
	{"--ink", append(surfaces[:len(surfaces):len(surfaces)], "--accent-soft", "--highlight-soft", "--danger-soft"), "body text, labels, notices, badges"},
	{"--ink-muted", append(surfaces[:len(surfaces):len(surfaces)], "--accent-soft"), "hints, meta lines, quiet buttons, a picker option's description under the pointer"},
	{"--ink-faint", surfaces, "placeholders, the empty sidebar"},
	{"--accent", []string{"--bg", "--surface-1", "--surface-2", "--surface-3"}, "links"},
	{"--accent-ink", []string{"--accent", "--accent-hover"}, "primary button text"},
	{"--danger", []string{"--bg", "--surface-1", "--surface-2", "--surface-3", "--danger-soft"}, "field errors, danger buttons, form messages"},
	{"--danger-ink", []string{"--danger"}, "a danger button under the pointer"},
}

// uiPairs are non-text colours that have to be seen (WCAG 1.4.11, 3:1):
// the focus ring on every surface, and the edge of an input.
var uiPairs = []struct {
	fg  string
	bgs []string
}{
	{"--focus", surfaces},
	{"--border-strong", []string{"--field", "--bg", "--surface-1"}},
}

var themes = []string{"moria", "shire"}

func readCSS(t *testing.T, name string) []cssRule {
	t.Helper()
	src, err := fs.ReadFile(FS, name)
	if err != nil {
		t.Fatal(err)
	}
	rules, err := parseCSS(string(src))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return rules
}

func TestThemeTextContrast(t *testing.T) {
	rules := readCSS(t, "css/tokens.css")
	for _, theme := range themes {
		tokens := themeTokens(rules, theme)
		for _, p := range textPairs {
			for _, bg := range p.bgs {
				ratio, err := pairContrast(tokens, p.fg, bg)
				if err != nil {
					t.Errorf("%s: %s on %s: %v", theme, p.fg, bg, err)
					continue
				}
				if ratio < 4.5 {
					t.Errorf("%s: %s on %s is %.2f:1, under 4.5 (%s)", theme, p.fg, bg, ratio, p.why)
				} else {
					t.Logf("%s: %-13s on %-16s %5.2f:1", theme, p.fg, bg, ratio)
				}
			}
		}
	}
}

func TestThemeControlContrast(t *testing.T) {
	rules := readCSS(t, "css/tokens.css")
	for _, theme := range themes {
		tokens := themeTokens(rules, theme)
		for _, p := range uiPairs {
			for _, bg := range p.bgs {
				ratio, err := pairContrast(tokens, p.fg, bg)
				if err != nil {
					t.Errorf("%s: %s on %s: %v", theme, p.fg, bg, err)
				} else if ratio < 3 {
					t.Errorf("%s: %s on %s is %.2f:1, under 3", theme, p.fg, bg, ratio)
				}
			}
		}
	}
}

// The check itself has to be able to say no.
func TestContrastCheckFails(t *testing.T) {
	for _, c := range []struct {
		fg, bg     string
		min, max   float64
		passesText bool
	}{
		{"#000000", "#ffffff", 20.99, 21.01, true},
		{"#ffffff", "#ffffff", 0.99, 1.01, false},
		{"#767676", "#ffffff", 4.54, 4.55, true}, // the lightest grey that passes on white
		{"#777777", "#ffffff", 4.47, 4.49, false},
		{"#00000080", "#ffffff", 3.9, 4.1, false}, // composited to #808080
		{"color-mix(in srgb, #000000 50%, #ffffff)", "#ffffff", 3.9, 4.1, false},
	} {
		fg, err := parseColour(c.fg)
		if err != nil {
			t.Fatal(err)
		}
		bg, err := parseColour(c.bg)
		if err != nil {
			t.Fatal(err)
		}
		ratio, err := contrast(fg, bg)
		if err != nil {
			t.Fatal(err)
		}
		if ratio < c.min || ratio > c.max || (ratio >= 4.5) != c.passesText {
			t.Errorf("%s on %s: %.3f, want %.2f..%.2f (passes: %v)", c.fg, c.bg, ratio, c.min, c.max, c.passesText)
		}
	}

	// Through the same path as the real table: tokens, var() and all.
	fake := map[string]string{"--grey": "var(--mid)", "--mid": "#777777", "--paper": "#ffffff", "--glass": "#ffffff80"}
	if ratio, err := pairContrast(fake, "--grey", "--paper"); err != nil || ratio >= 4.5 {
		t.Errorf("a failing pair passed: %.2f, %v", ratio, err)
	}
	if _, err := pairContrast(fake, "--grey", "--glass"); err == nil {
		t.Error("a translucent surface was accepted")
	}
	if _, err := pairContrast(fake, "--nowhere", "--paper"); err == nil {
		t.Error("an undefined token was accepted")
	}
	loop := map[string]string{"--a": "var(--b)", "--b": "var(--a)", "--c": "#ffffff"}
	if _, err := pairContrast(loop, "--a", "--c"); err == nil {
		t.Error("a var() loop was accepted")
	}

	// And with the real themes: a border is not text, and must not pass as it.
	rules := readCSS(t, "css/tokens.css")
	for _, theme := range themes {
		tokens := themeTokens(rules, theme)
		if ratio, err := pairContrast(tokens, "--border", "--surface-1"); err != nil || ratio >= 4.5 {
			t.Errorf("%s: --border on --surface-1 reads as text (%.2f, %v)", theme, ratio, err)
		}
	}
}

// Each theme sets its own palette: a colour moria sets and shire forgets
// would put a dark-theme colour on parchment without anyone noticing.
func TestShireSetsEveryColour(t *testing.T) {
	rules := readCSS(t, "css/tokens.css")
	moria, shire := map[string]bool{}, map[string]bool{}
	for _, r := range rules {
		if r.within != "" {
			continue
		}
		for _, d := range r.decls {
			if !hexColour.MatchString(d.value) {
				continue
			}
			if anySelector(r.selectors, matchesMoria) {
				moria[d.prop] = true
			}
			if anySelector(r.selectors, matchesShire) {
				shire[d.prop] = true
			}
		}
	}
	if len(moria) == 0 {
		t.Fatal("no colours found for moria")
	}
	for p := range moria {
		if !shire[p] {
			t.Errorf("shire does not set %s", p)
		}
	}
	for p := range shire {
		if !moria[p] {
			t.Errorf("moria does not set %s (a theme without it would have none)", p)
		}
	}
}

var (
	appHexColour = regexp.MustCompile(`#[0-9a-fA-F]{3,8}\b`)
	colourFunc   = regexp.MustCompile(`(?i)\b(rgba?|hsla?|hwb|lab|lch|oklab|oklch|color|color-mix)\(`)
	customProp   = regexp.MustCompile(`--[A-Za-z0-9_-]+`)
	valueWord    = regexp.MustCompile(`[A-Za-z0-9.%-]+`)
	lengthLit    = regexp.MustCompile(`(?i)^(-?(?:\d+\.?\d*|\.\d+))(px|rem|em|ex|ch|vh|vw|vmin|vmax|dvh|svh|lvh|dvw|svw|lvw|pt|pc|cm|mm|in|q|ms|s|%)$`)
	identWord    = regexp.MustCompile(`[A-Za-z][A-Za-z-]*`)
	namedColours = map[string]bool{
		"white": true, "black": true, "red": true, "green": true, "blue": true, "gray": true,
		"grey": true, "silver": true, "yellow": true, "orange": true, "purple": true, "navy": true,
		"teal": true, "maroon": true, "olive": true, "lime": true, "aqua": true, "fuchsia": true,
		"pink": true, "brown": true, "gold": true, "beige": true, "ivory": true, "tan": true,
	}
)

// allowedLength is the short list of literal lengths app.css may hold:
// nothing, hairlines, and all of something.
func allowedLength(num, unit string) bool {
	if v, err := strconv.ParseFloat(num, 64); err == nil && v == 0 {
		return true
	}
	switch strings.TrimPrefix(strings.ToLower(num+unit), "-") {
	case "1px", "2px", "100%":
		return true
	}
	return false
}

// appCSSProblems lists every value in a stylesheet that should have been
// a token. Selectors and @media conditions are not values, so neither the
// #ids in selectors nor the breakpoints count.
func appCSSProblems(rules []cssRule) []string {
	var out []string
	for _, r := range rules {
		where := strings.Join(r.selectors, ", ")
		for _, d := range r.decls {
			if strings.HasPrefix(d.prop, "--") {
				out = append(out, fmt.Sprintf("%s: defines %s; tokens live in tokens.css", where, d.prop))
				continue
			}
			v := customProp.ReplaceAllString(d.value, "--")
			if m := appHexColour.FindString(v); m != "" {
				out = append(out, fmt.Sprintf("%s { %s: %s }: colour %s", where, d.prop, d.value, m))
			}
			if m := colourFunc.FindString(v); m != "" {
				out = append(out, fmt.Sprintf("%s { %s: %s }: colour function %s", where, d.prop, d.value, m))
			}
			for _, w := range identWord.FindAllString(v, -1) {
				if namedColours[strings.ToLower(w)] {
					out = append(out, fmt.Sprintf("%s { %s: %s }: named colour %s", where, d.prop, d.value, w))
				}
			}
			for _, w := range valueWord.FindAllString(v, -1) {
				m := lengthLit.FindStringSubmatch(w)
				if m != nil && !allowedLength(m[1], m[2]) {
					out = append(out, fmt.Sprintf("%s { %s: %s }: literal %s%s", where, d.prop, d.value, m[1], m[2]))
				}
			}
		}
	}
	return out
}

func TestAppCSSHoldsNoValues(t *testing.T) {
	for _, p := range appCSSProblems(readCSS(t, "css/app.css")) {
		t.Error(p)
	}
}

func TestAppCSSCheckFails(t *testing.T) {
	bad := `
		#app .x { color: #abcdef; }
		.a { background: rgb(1 2 3); }
		.b { color: white; }
		.c { padding: 12px 1.5rem; margin: 0; }
		.d { transition: opacity 200ms; }
		.e { width: 50%; }
		.f { --local: 3px; }
		@media (max-width: 48rem) { .g { gap: 4px; } }`
	good := `
		#app, #add { padding: 0; border: 1px solid var(--border); margin: -1px; }
		.h { width: 100%; transform: translateX(-100%); gap: var(--space-2); }
		.i { grid-template-columns: var(--sidebar-w) minmax(0, 1fr); line-height: 1; opacity: 0.5; }
		.j { padding: calc(var(--space-1) / 2) var(--space-2); border-left: 2px solid var(--danger); }
		@media (max-width: 48rem) { .k { inset: 0; } }`
	rules, err := parseCSS(bad)
	if err != nil {
		t.Fatal(err)
	}
	if got := appCSSProblems(rules); len(got) != 9 {
		t.Errorf("bad sheet: %d problems, want 9:\n%s", len(got), strings.Join(got, "\n"))
	}
	rules, err = parseCSS(good)
	if err != nil {
		t.Fatal(err)
	}
	if got := appCSSProblems(rules); len(got) != 0 {
		t.Errorf("good sheet flagged:\n%s", strings.Join(got, "\n"))
	}
}

var varUse = regexp.MustCompile(`var\(\s*(--[A-Za-z0-9_-]+)`)

func TestAppCSSTokensExist(t *testing.T) {
	tokens := map[string]bool{}
	for _, r := range readCSS(t, "css/tokens.css") {
		for _, d := range r.decls {
			if strings.HasPrefix(d.prop, "--") {
				tokens[d.prop] = true
			}
		}
	}
	// Tokens may refer to each other; app.css may refer only to tokens.
	for _, file := range []string{"css/tokens.css", "css/app.css"} {
		for _, r := range readCSS(t, file) {
			for _, d := range r.decls {
				for _, m := range varUse.FindAllStringSubmatch(d.value, -1) {
					if !tokens[m[1]] {
						t.Errorf("%s: %s { %s } uses %s, which tokens.css does not define", file, strings.Join(r.selectors, ", "), d.prop, m[1])
					}
				}
			}
		}
	}
	// Every theme resolves every token it has.
	rules := readCSS(t, "css/tokens.css")
	for _, theme := range themes {
		tokens := themeTokens(rules, theme)
		for name := range tokens {
			if _, err := resolve(tokens, "var("+name+")", 0); err != nil {
				t.Errorf("%s: %s: %v", theme, name, err)
			}
		}
	}
}

// The [hidden] rule must come first and win: see the note at the top of
// app.css.
func TestAppCSSHiddenWins(t *testing.T) {
	rules := readCSS(t, "css/app.css")
	if len(rules) == 0 {
		t.Fatal("app.css has no rules")
	}
	first := rules[0]
	if strings.Join(first.selectors, ",") != "[hidden]" || len(first.decls) != 1 ||
		first.decls[0].prop != "display" || strings.Join(strings.Fields(first.decls[0].value), " ") != "none !important" {
		t.Errorf("first rule of app.css is %v %v, want [hidden] { display: none !important; }", first.selectors, first.decls)
	}
}

// ui.js builds dialogs and toasts with DOM calls under a strict CSP: no
// markup from strings, no inline styles, nothing evaluated, and never the
// browser's own boxes.
func TestUIScriptStaysInBounds(t *testing.T) {
	src, err := fs.ReadFile(FS, "js/ui.js")
	if err != nil {
		t.Fatal(err)
	}
	forbidden := regexp.MustCompile(`\bwindow\.(alert|confirm|prompt)\b|(^|[^.\w-])(alert|confirm|prompt)\s*\(|innerHTML|outerHTML|insertAdjacentHTML|document\.write|\.style\b|setAttribute\(\s*["']style|\beval\s*\(|new\s+Function\b`)
	for i, line := range strings.Split(string(src), "\n") {
		if m := forbidden.FindString(line); m != "" {
			t.Errorf("js/ui.js:%d: %q", i+1, strings.TrimSpace(m))
		}
	}
}
