package render

import (
	"math/rand/v2"
	"strings"
	"testing"
	"testing/quick"
)

// Escaping is chunk-safe on purpose: escaping a stream's chunks one by one
// must give the bytes escaping the whole would, wherever the chunks were
// cut (inside an entity-looking run, or inside a multi-byte character).
func TestEscapeTextIsChunkSafe(t *testing.T) {
	alphabet := []string{"a", " ", "/", "<", ">", "&", "\"", "'", "&amp;", "é", "日", "\n", "\t", "\x00", "\xff"}
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		var b strings.Builder
		for range r.IntN(40) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		s := b.String()
		whole := EscapeText(s)
		var pieces strings.Builder
		for i := 0; i < len(s); {
			n := min(1+r.IntN(5), len(s)-i)
			pieces.WriteString(EscapeText(s[i : i+n]))
			i += n
		}
		if pieces.String() != whole {
			t.Fatalf("%q: chunks give %q, whole gives %q", s, pieces.String(), whole)
		}
	}
	prop := func(a, b string) bool { return EscapeText(a)+EscapeText(b) == EscapeText(a+b) }
	if err := quick.Check(prop, nil); err != nil {
		t.Error(err)
	}
}

func TestEscapeText(t *testing.T) {
	for in, want := range map[string]string{
		`<a href="x">'&'</a>`:       "&lt;a href=&#34;x&#34;&gt;&#39;&amp;&#39;&lt;/a&gt;",
		"plain text / with slashes": "plain text / with slashes",
		"":                          "",
	} {
		if got := EscapeText(in); got != want {
			t.Errorf("EscapeText(%q) = %q, want %q", in, got, want)
		}
	}
	// Spaces and slashes are not inflated: a sentence costs what it weighs.
	s := strings.Repeat("the path is a/b/c ", 100)
	if got := EscapeText(s); len(got) != len(s) {
		t.Errorf("escaped %d bytes of spaces and slashes into %d", len(s), len(got))
	}
}
