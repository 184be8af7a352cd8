package render

import (
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// code.css styles what this package emits, from tokens.css's values only.
// These tests read both sheets with a small parser of their own (enough
// for two hand-written files): the --code-* block exists in both themes,
// its text colours can be read on the code background, and code.css holds
// no values of its own and no unscoped rule.

const (
	tokensCSS = "../web/static/css/tokens.css"
	codeCSS   = "../web/static/css/code.css"
)

type cssRule struct {
	selectors []string
	decls     [][2]string // property, value
}

var cssCommentRE = regexp.MustCompile(`(?s)/\*.*?\*/`)

// parseSheet returns a sheet's style rules, with the rules inside @media
// and other block at-rules flattened into the list.
func parseSheet(src string) ([]cssRule, error) {
	src = cssCommentRE.ReplaceAllString(src, "")
	var out []cssRule
	for {
		open := strings.IndexByte(src, '{')
		if open < 0 {
			if strings.TrimSpace(src) != "" {
				return nil, fmt.Errorf("text outside a rule: %q", strings.TrimSpace(src))
			}
			return out, nil
		}
		depth, end := 0, -1
		for i := open; i < len(src) && end < 0; i++ {
			switch src[i] {
			case '{':
				depth++
			case '}':
				if depth--; depth == 0 {
					end = i
				}
			}
		}
		if end < 0 {
			return nil, fmt.Errorf("unclosed block after %q", strings.TrimSpace(src[:open]))
		}
		prelude, body := strings.TrimSpace(src[:open]), src[open+1:end]
		src = src[end+1:]
		if strings.HasPrefix(prelude, "@") {
			inner, err := parseSheet(body)
			if err != nil {
				return nil, err
			}
			out = append(out, inner...)
			continue
		}
		var r cssRule
		for _, sel := range splitOutside(prelude, ',') {
			r.selectors = append(r.selectors, strings.Join(strings.Fields(sel), " "))
		}
		for _, d := range strings.Split(body, ";") {
			if d = strings.TrimSpace(d); d == "" {
				continue
			}
			prop, value, ok := strings.Cut(d, ":")
			if !ok {
				return nil, fmt.Errorf("%s: declaration without a colon: %q", prelude, d)
			}
			r.decls = append(r.decls, [2]string{strings.TrimSpace(prop), strings.TrimSpace(value)})
		}
		out = append(out, r)
	}
}

// splitOutside splits s on sep where sep is not inside parentheses (so
// ":is(.a, .b)" stays one selector).
func splitOutside(s string, sep byte) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case sep:
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

func readSheet(t *testing.T, path string) []cssRule {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rules, err := parseSheet(string(src))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rules
}

// themeBlocks returns the tokens each theme's own block sets (moria's
// block matches bare :root too) and the tokens every theme sees: moria's
// with shire's on top, as the cascade gives them.
type themeTokens struct {
	own, all map[string]string
}

func readThemes(t *testing.T) map[string]themeTokens {
	t.Helper()
	isMoria := func(sel string) bool { return sel == `:root[data-theme="moria"]` }
	isShire := func(sel string) bool { return sel == `:root[data-theme="shire"]` || sel == `:root[data-base="shire"]` }
	root := map[string]string{}
	own := map[string]map[string]string{"moria": {}, "shire": {}}
	for _, r := range readSheet(t, tokensCSS) {
		m, s, bare := slices.ContainsFunc(r.selectors, isMoria), slices.ContainsFunc(r.selectors, isShire), slices.Contains(r.selectors, ":root")
		for _, d := range r.decls {
			if !strings.HasPrefix(d[0], "--") {
				continue
			}
			if bare || m {
				root[d[0]] = d[1]
			}
			if m {
				own["moria"][d[0]] = d[1]
			}
			if s {
				own["shire"][d[0]] = d[1]
			}
		}
	}
	shire := map[string]string{}
	for k, v := range root {
		shire[k] = v
	}
	for k, v := range own["shire"] {
		shire[k] = v
	}
	return map[string]themeTokens{
		"moria": {own: own["moria"], all: root},
		"shire": {own: own["shire"], all: shire},
	}
}

var varRefRE = regexp.MustCompile(`^var\(\s*(--[\w-]+)\s*\)$`)

// colour resolves a token to an opaque #rrggbb colour as r, g, b in 0..1.
func colour(tokens map[string]string, name string) ([3]float64, error) {
	v, ok := tokens[name]
	for hops := 0; ok; hops++ {
		m := varRefRE.FindStringSubmatch(v)
		if m == nil || hops > 10 {
			break
		}
		v, ok = tokens[m[1]]
	}
	if !ok {
		return [3]float64{}, fmt.Errorf("%s is not defined", name)
	}
	return parseHex(v)
}

func parseHex(v string) ([3]float64, error) {
	var c [3]float64
	if len(v) != 7 || v[0] != '#' {
		return c, fmt.Errorf("%q is not #rrggbb", v)
	}
	for i := range c {
		n, err := strconv.ParseUint(v[1+2*i:3+2*i], 16, 8)
		if err != nil {
			return c, fmt.Errorf("%q: %w", v, err)
		}
		c[i] = float64(n) / 255
	}
	return c, nil
}

// contrastRatio is WCAG 2's contrast between two opaque colours.
func contrastRatio(a, b [3]float64) float64 {
	lum := func(c [3]float64) float64 {
		var l [3]float64
		for i, v := range c {
			if v <= 0.04045 {
				l[i] = v / 12.92
			} else {
				l[i] = math.Pow((v+0.055)/1.055, 2.4)
			}
		}
		return 0.2126*l[0] + 0.7152*l[1] + 0.0722*l[2]
	}
	hi, lo := lum(a), lum(b)
	if hi < lo {
		hi, lo = lo, hi
	}
	return (hi + 0.05) / (lo + 0.05)
}

func TestContrastRatioCanFail(t *testing.T) {
	for _, c := range []struct {
		fg, bg string
		passes bool
	}{
		{"#000000", "#ffffff", true},
		{"#767676", "#ffffff", true}, // the lightest grey that passes on white
		{"#777777", "#ffffff", false},
		{"#ffffff", "#ffffff", false},
	} {
		fg, _ := parseHex(c.fg)
		bg, _ := parseHex(c.bg)
		if got := contrastRatio(fg, bg) >= 4.5; got != c.passes {
			t.Errorf("%s on %s: passes=%v, want %v", c.fg, c.bg, got, c.passes)
		}
	}
}

// codeTokens lists a theme block's own --code-* tokens, sorted.
func codeTokens(own map[string]string) []string {
	var names []string
	for k := range own {
		if strings.HasPrefix(k, "--code-") {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	return names
}

func TestCodeTokensInBothThemes(t *testing.T) {
	themes := readThemes(t)
	moria, shire := codeTokens(themes["moria"].own), codeTokens(themes["shire"].own)
	if !slices.Contains(moria, "--code-bg") {
		t.Fatal("moria sets no --code-bg")
	}
	if !slices.Equal(moria, shire) {
		t.Errorf("the themes set different --code-* tokens:\nmoria %v\nshire %v", moria, shire)
	}
	for theme, tt := range themes {
		for _, name := range codeTokens(tt.own) {
			if _, err := parseHex(tt.own[name]); err != nil {
				t.Errorf("%s: %s: %v", theme, name, err)
			}
		}
	}
}

func TestCodeTokenContrast(t *testing.T) {
	for theme, tt := range readThemes(t) {
		bg, err := colour(tt.all, "--code-bg")
		if err != nil {
			t.Fatalf("%s: %v", theme, err)
		}
		names := codeTokens(tt.own)
		if len(names) < 10 {
			t.Fatalf("%s: only %d --code-* tokens", theme, len(names))
		}
		for _, name := range names {
			if name == "--code-bg" {
				continue
			}
			fg, err := colour(tt.all, name)
			if err != nil {
				t.Errorf("%s: %v", theme, err)
				continue
			}
			if r := contrastRatio(fg, bg); r < 4.5 {
				t.Errorf("%s: %s on --code-bg is %.2f:1, under 4.5", theme, name, r)
			} else {
				t.Logf("%s: %-20s %5.2f:1", theme, name, r)
			}
		}
	}
}

var (
	hexLiteralRE = regexp.MustCompile(`#[0-9a-fA-F]{3,8}\b`)
	colourFnRE   = regexp.MustCompile(`(?i)\b(rgba?|hsla?|hwb|lab|lch|oklab|oklch|color|color-mix)\(`)
	customNameRE = regexp.MustCompile(`--[\w-]+`)
	numberUnitRE = regexp.MustCompile(`(?i)(?:^|[^\w.-])(-?(?:\d+\.?\d*|\.\d+))(px|rem|em|ex|ch|vh|vw|vmin|vmax|dvh|svh|lvh|pt|pc|cm|mm|in|q|ms|s|%)\b`)
	wordRE       = regexp.MustCompile(`[A-Za-z][A-Za-z-]*`)
	usedVarRE    = regexp.MustCompile(`var\(\s*(--[\w-]+)`)
	namedColour  = map[string]bool{
		"white": true, "black": true, "red": true, "green": true, "blue": true, "gray": true,
		"grey": true, "silver": true, "yellow": true, "orange": true, "purple": true, "navy": true,
		"teal": true, "maroon": true, "olive": true, "lime": true, "aqua": true, "fuchsia": true,
		"pink": true, "brown": true, "gold": true, "beige": true, "ivory": true, "tan": true,
	}
)

// sheetProblems lists every value in a stylesheet that should have been a
// token, every token it uses that is not defined, and every selector that
// is not scoped to prose or to a code block.
func sheetProblems(rules []cssRule, defined map[string]bool) []string {
	var out []string
	for _, r := range rules {
		where := strings.Join(r.selectors, ", ")
		for _, sel := range r.selectors {
			if !strings.HasPrefix(sel, ".prose") && !strings.HasPrefix(sel, ".code-") {
				out = append(out, fmt.Sprintf("%s: not scoped to .prose or a .code-* class", sel))
			}
		}
		for _, d := range r.decls {
			prop, value := d[0], d[1]
			if strings.HasPrefix(prop, "--") {
				out = append(out, fmt.Sprintf("%s: defines %s; tokens live in tokens.css", where, prop))
				continue
			}
			for _, m := range usedVarRE.FindAllStringSubmatch(value, -1) {
				if !defined[m[1]] {
					out = append(out, fmt.Sprintf("%s { %s }: %s is not in tokens.css", where, prop, m[1]))
				}
			}
			v := customNameRE.ReplaceAllString(value, "--")
			if m := hexLiteralRE.FindString(v); m != "" {
				out = append(out, fmt.Sprintf("%s { %s: %s }: colour %s", where, prop, value, m))
			}
			if m := colourFnRE.FindString(v); m != "" {
				out = append(out, fmt.Sprintf("%s { %s: %s }: colour function %s", where, prop, value, m))
			}
			for _, w := range wordRE.FindAllString(v, -1) {
				if namedColour[strings.ToLower(w)] {
					out = append(out, fmt.Sprintf("%s { %s: %s }: named colour %s", where, prop, value, w))
				}
			}
			for _, m := range numberUnitRE.FindAllStringSubmatch(v, -1) {
				if !allowedLiteral(m[1], m[2]) {
					out = append(out, fmt.Sprintf("%s { %s: %s }: literal %s%s", where, prop, value, m[1], m[2]))
				}
			}
		}
	}
	return out
}

// allowedLiteral is the short list of lengths a sheet may write itself:
// nothing, hairlines, and all of something.
func allowedLiteral(num, unit string) bool {
	if f, err := strconv.ParseFloat(num, 64); err == nil && f == 0 {
		return true
	}
	switch strings.TrimPrefix(strings.ToLower(num+unit), "-") {
	case "1px", "2px", "100%":
		return true
	}
	return false
}

func definedTokens(t *testing.T) map[string]bool {
	t.Helper()
	defined := map[string]bool{}
	for _, r := range readSheet(t, tokensCSS) {
		for _, d := range r.decls {
			if strings.HasPrefix(d[0], "--") {
				defined[d[0]] = true
			}
		}
	}
	return defined
}

func TestCodeCSSHoldsOnlyTokens(t *testing.T) {
	for _, p := range sheetProblems(readSheet(t, codeCSS), definedTokens(t)) {
		t.Error(p)
	}
}

func TestCodeCSSCheckCanFail(t *testing.T) {
	bad := `
		.prose p { color: #abcdef; }
		.prose a { color: rgb(1 2 3); }
		.code-x { background: white; }
		.code-y { padding: 12px var(--space-1); }
		.code-z { transition: opacity 200ms; }
		.prose q { --local: 1px; }
		.prose b { color: var(--no-such-token); }
		p { margin: 0; }
		@media (max-width: 48rem) { .prose i { gap: 0.5rem; } }`
	good := `
		.prose p, .prose :is(h3, h4) code { margin: 0 0 var(--space-4); border: 1px solid var(--border); }
		.code-block { width: 100%; height: calc(var(--control-h) - var(--space-2)); margin: calc(var(--space-5) * -1); }`
	defined := map[string]bool{"--space-1": true, "--space-2": true, "--space-4": true, "--space-5": true, "--border": true, "--control-h": true}
	rules, err := parseSheet(bad)
	if err != nil {
		t.Fatal(err)
	}
	if got := sheetProblems(rules, defined); len(got) != 9 {
		t.Errorf("bad sheet: %d problems, want 9:\n%s", len(got), strings.Join(got, "\n"))
	}
	rules, err = parseSheet(good)
	if err != nil {
		t.Fatal(err)
	}
	if got := sheetProblems(rules, defined); len(got) != 0 {
		t.Errorf("good sheet flagged:\n%s", strings.Join(got, "\n"))
	}
}

// Every colour token of the block is used by code.css, and every token
// class the highlighter emits for a few common languages is styled (the
// unstyled types are emitted without a class at all).
func TestCodeCSSCoversTheTokens(t *testing.T) {
	src, err := os.ReadFile(codeCSS)
	if err != nil {
		t.Fatal(err)
	}
	sheet := string(src)
	for _, name := range codeTokens(readThemes(t)["moria"].own) {
		if !strings.Contains(sheet, "var("+name+")") {
			t.Errorf("code.css does not use %s", name)
		}
	}
	classRE := regexp.MustCompile(`class="(c-[a-z0-9]+)"`)
	samples := map[string]string{
		"go":     "package main\n\nimport \"fmt\"\n\n// main says hello.\nfunc main() {\n\tvar n int = 0x1f\n\tfmt.Println(\"hi\", n+1, true, nil)\n}\n",
		"python": "import os\n\n@decorator\ndef f(x: int) -> str:\n    \"\"\"Doc.\"\"\"\n    return f'{x}' if x > 1.5 else None  # comment\n",
		"diff":   "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n",
		"js":     "const x = /re+/g; let y = `t${x}`; class A extends B { m() { return this.x ?? 1; } }\n",
		"bash":   "#!/bin/sh\nfor f in *.go; do echo \"$f\" | wc -l; done\n",
	}
	for lang, code := range samples {
		h, ok := highlight(lang, code)
		if !ok {
			t.Errorf("%s: not highlighted", lang)
			continue
		}
		for _, m := range classRE.FindAllStringSubmatch(h, -1) {
			if !regexp.MustCompile(`\.` + m[1] + `\b`).MatchString(sheet) {
				t.Errorf("%s: class %s is emitted but not styled", lang, m[1])
			}
		}
	}
}
