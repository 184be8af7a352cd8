package render

import (
	"regexp"
	"strings"
	"sync"

	"github.com/alecthomas/chroma/v2"
	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"
)

// tokenClassPrefix namespaces chroma's short token classes ("k", "s2",
// "nf", one to three characters each) so that they cannot collide with a
// class anywhere else in the UI. The sanitiser allows exactly these.
const tokenClassPrefix = "c-"

// maxHighlight is the largest code block we hand to a lexer. Lexers are
// regular expressions over untrusted text (chroma gives each match a
// timeout, but a block is many matches); past this size a block is shown
// plain, which costs nothing and loses only colour.
const maxHighlight = 64 << 10

// langPattern is what a fence's language word must look like to be used:
// it becomes an attribute value, a label and a lexer lookup. Anything else
// is treated as no language at all.
var langPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9+#._-]{0,31}$`)

// codeFormatter writes token spans with classes and nothing else: no
// surrounding <pre> (the code-block wrapper is ours), no per-line spans,
// and never a style attribute (the CSP would refuse it and code.css maps
// every class to a --code-* token). It is safe for concurrent use.
var codeFormatter = chromahtml.New(
	chromahtml.WithClasses(true),
	chromahtml.ClassPrefix(tokenClassPrefix),
	chromahtml.PreventSurroundingPre(true),
)

// lexerIndex maps a lower-case language name, alias or file extension to
// its lexer. chroma's own lookup, on a miss, matches the name against every
// lexer's filename patterns, which costs milliseconds each time: a reply
// full of made-up languages would cost seconds. The index is built once,
// on first use, and never changed after.
var lexerIndex = sync.OnceValue(func() map[string]chroma.Lexer {
	index := map[string]chroma.Lexer{}
	priority := map[string]float32{}
	all := lexers.GlobalLexerRegistry.Lexers
	for _, l := range all {
		c := l.Config()
		p := c.Priority
		if p == 0 { // as chroma ranks them
			p = 1
		}
		for _, glob := range c.Filenames {
			ext, ok := strings.CutPrefix(glob, "*.")
			if !ok || strings.ContainsAny(ext, "*?[") {
				continue
			}
			// Globs are case-sensitive ("*.H" is C++, "*.h" is C), and
			// lookups are lower-case, so an upper-case one is never found.
			if best, seen := priority[ext]; !seen || p > best {
				index[ext], priority[ext] = l, p
			}
		}
	}
	// Names and aliases win over extensions; of two lexers claiming one
	// alias, the first registered keeps it.
	named := map[string]bool{}
	for _, l := range all {
		c := l.Config()
		for _, n := range append([]string{c.Name}, c.Aliases...) {
			if n = strings.ToLower(n); !named[n] {
				index[n], named[n] = l, true
			}
		}
	}
	return index
})

// codeLang returns the language named by a fence's info string, or "" when
// there is none or it does not look like a language name.
func codeLang(info []byte) string {
	if len(info) == 0 || !langPattern.Match(info) {
		return ""
	}
	return string(info)
}

// highlight returns code as HTML token spans for lang, or ok=false when no
// lexer knows lang, the block is too large, or the lexer fails; the caller
// then writes the code escaped.
func highlight(lang, code string) (out string, ok bool) {
	if lang == "" || len(code) > maxHighlight {
		return "", false
	}
	lexer := lexerIndex()[strings.ToLower(lang)]
	if lexer == nil {
		return "", false
	}
	// A lexer is third-party regular expressions over untrusted text; a
	// panic in one must cost the colours of one block, not the reply.
	defer func() {
		if recover() != nil {
			out, ok = "", false
		}
	}()
	it, err := chroma.Coalesce(lexer).Tokenise(nil, code)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	b.Grow(len(code) * 2)
	if err := codeFormatter.Format(&b, styles.Fallback, plainUnstyled(it)); err != nil {
		return "", false
	}
	return b.String(), true
}

// unstyled are the token types code.css leaves in the block's ink colour:
// whitespace, plain names and variables. The formatter writes a plain-text
// token without a span, and a span around each of these would add a third
// to a highlighted block's markup (and to every frame that carries it) for
// no visible difference.
var unstyled = map[chroma.TokenType]bool{
	chroma.TextWhitespace: true, chroma.Other: true,
	chroma.Name: true, chroma.NameOther: true, chroma.NameProperty: true,
	chroma.NameVariable: true, chroma.NameVariableClass: true,
	chroma.NameVariableGlobal: true, chroma.NameVariableInstance: true, chroma.NameVariableMagic: true,
}

// plainUnstyled turns unstyled tokens into plain text.
func plainUnstyled(it chroma.Iterator) chroma.Iterator {
	return func() chroma.Token {
		t := it()
		if unstyled[t.Type] {
			t.Type = chroma.Text
		}
		return t
	}
}
