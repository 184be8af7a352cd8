package render

import (
	"strings"
	"testing"
)

// FuzzMarkdownSanitiser renders arbitrary text whole and streamed in two
// frames, and holds every output to the same invariants as the hostile
// corpus: nothing outside the allow-list, nothing executable, no request
// made by the markup. The renderer must not fail (panic) on any input.
func FuzzMarkdownSanitiser(f *testing.F) {
	for _, s := range hostile {
		f.Add(s, uint16(len(s)/2))
	}
	for _, s := range blocks {
		f.Add(s, uint16(1))
	}
	f.Add(strings.Join(blocks, "\n\n"), uint16(300))
	f.Fuzz(func(t *testing.T, src string, split uint16) {
		out, err := renderDocument(shared, []byte(src))
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		if bad := unsafeParts(out); len(bad) > 0 {
			t.Fatalf("%q: %v\n%s", src, bad, out)
		}
		at := int(split) % (len(src) + 1)
		var s Stream
		s.Append(src[:at])
		mid, err := s.renderTail(s.src[s.done:])
		if err != nil {
			t.Fatalf("%q split at %d: %v", src, at, err)
		}
		if bad := unsafeParts(s.cached.String() + mid); len(bad) > 0 {
			t.Fatalf("%q split at %d: %v", src, at, bad)
		}
		s.Append(src[at:])
		if bad := unsafeParts(s.HTML()); len(bad) > 0 {
			t.Fatalf("%q streamed: %v", src, bad)
		}
		if s.Final() != out {
			t.Fatalf("%q: Final differs from Markdown", src)
		}
	})
}

// FuzzStreamMatchesMarkdown looks for text where the stream's cache goes
// wrong: streamed in pieces of any size with a frame after each, the last
// frame must equal the full render (leaving out the two documented
// exceptions: link reference definitions and a fence still open at the
// end).
func FuzzStreamMatchesMarkdown(f *testing.F) {
	for _, s := range blocks {
		f.Add(s+"\n\n"+s, uint8(3))
	}
	f.Fuzz(func(t *testing.T, src string, size uint8) {
		if hasDefinitions(src) || hasOpenFence(src) {
			return
		}
		n := int(size%16) + 1
		var s Stream
		var got string
		for i := 0; i < len(src); i += n {
			s.Append(src[i:min(i+n, len(src))])
			got = s.HTML()
		}
		if want := Markdown(src); got != want {
			t.Fatalf("pieces of %d\nsrc  %q\ngot  %q\nwant %q", n, src, got, want)
		}
	})
}
