package main

import (
	"bytes"
	"encoding/xml"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// repoRoot is the repository root, seen from this package's folder.
const repoRoot = "../.."

// allFiles generates once for all the tests.
var allFiles = sync.OnceValue(files)

// TestCommittedFilesAreCurrent writes everything into a temporary folder and
// compares each file with the one in the repository.
func TestCommittedFilesAreCurrent(t *testing.T) {
	dir := t.TempDir()
	if err := write(dir); err != nil {
		t.Fatal(err)
	}
	var bad []string
	for _, f := range allFiles() {
		want, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.name)))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(f.name)))
		switch {
		case err != nil:
			t.Errorf("%s: %v", f.name, err)
			bad = append(bad, f.name)
		case !bytes.Equal(got, want):
			t.Errorf("%s differs from what the generator writes", f.name)
			bad = append(bad, f.name)
		}
	}
	if len(bad) > 0 {
		t.Errorf("%d generated file(s) out of date or edited by hand. These files are generated: change scripts/artwork/main.go if need be, then run `go run ./scripts/artwork` from the repository root", len(bad))
	}
}

// TestDeterministic generates twice and expects the same bytes.
func TestDeterministic(t *testing.T) {
	a, b := allFiles(), files()
	if len(a) != len(b) {
		t.Fatalf("%d files, then %d", len(a), len(b))
	}
	for i := range a {
		if a[i].name != b[i].name || !bytes.Equal(a[i].data, b[i].data) {
			t.Errorf("%s: two runs gave different output", a[i].name)
		}
	}
}

func generated(t *testing.T, name string) []byte {
	t.Helper()
	for _, f := range allFiles() {
		if f.name == name {
			return f.data
		}
	}
	t.Fatalf("%s is not generated", name)
	return nil
}

func TestSVGs(t *testing.T) {
	for _, name := range []string{"assets/mark.svg", "assets/favicon.svg", staticImg + "mark.svg", staticImg + "favicon.svg"} {
		data := generated(t, name)
		s := string(data)
		for _, bad := range []string{"<style", "style=", " id=", "<script", "href="} {
			if strings.Contains(s, bad) {
				t.Errorf("%s contains %q", name, bad)
			}
		}
		if !strings.Contains(s, `viewBox="0 0 64 64"`) {
			t.Errorf("%s: no 64x64 viewBox", name)
		}
		// Well-formed XML, paths filled with presentation attributes.
		dec := xml.NewDecoder(bytes.NewReader(data))
		paths := 0
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: not well-formed XML: %v", name, err)
			}
			if el, ok := tok.(xml.StartElement); ok && el.Name.Local == "path" {
				paths++
				fill := ""
				for _, a := range el.Attr {
					if a.Name.Local == "fill" {
						fill = a.Value
					}
				}
				if len(fill) != 7 || fill[0] != '#' {
					t.Errorf("%s: path without a plain fill colour: %q", name, fill)
				}
			}
		}
		if paths < 3 {
			t.Errorf("%s: only %d paths", name, paths)
		}
	}
	if mark, fav := generated(t, "assets/mark.svg"), generated(t, "assets/favicon.svg"); len(fav) >= len(mark) {
		t.Errorf("favicon.svg (%d bytes) should be simpler than mark.svg (%d bytes)", len(fav), len(mark))
	}
	if !bytes.Equal(generated(t, "assets/mark.svg"), generated(t, staticImg+"mark.svg")) {
		t.Error("the served mark.svg is not a copy of assets/mark.svg")
	}
	if !bytes.Equal(generated(t, "assets/favicon.svg"), generated(t, staticImg+"favicon.svg")) {
		t.Error("the served favicon.svg is not a copy of assets/favicon.svg")
	}
}

func TestPNGs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		size   int
		opaque bool // drawn on a solid background square
		colour color.NRGBA
	}{
		{"icon-192.png", 192, false, leafFace},
		{"icon-512.png", 512, false, crumb},
		{"icon-maskable-512.png", 512, true, leafFace},
		{"apple-touch-icon.png", 180, true, crumb},
		{"favicon-32.png", 32, false, leafFace},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img, err := png.Decode(bytes.NewReader(generated(t, staticImg+tc.name)))
			if err != nil {
				t.Fatal(err)
			}
			if b := img.Bounds(); b.Dx() != tc.size || b.Dy() != tc.size {
				t.Fatalf("size %v, want %dx%d", b.Size(), tc.size, tc.size)
			}
			var background, mark, translucent int
			b := img.Bounds()
			for y := b.Min.Y; y < b.Max.Y; y++ {
				for x := b.Min.X; x < b.Max.X; x++ {
					c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
					switch {
					case c == tc.colour:
						mark++
					case tc.opaque && c == stone, !tc.opaque && c.A == 0:
						background++
					}
					if c.A != 0xff {
						translucent++
					}
				}
			}
			if background == 0 || mark == 0 {
				t.Errorf("blank or wrong: %d background pixels, %d pixels of %v", background, mark, tc.colour)
			}
			if tc.opaque && translucent > 0 {
				t.Errorf("%d pixels not opaque on a solid background", translucent)
			}
		})
	}
}

// TestMaskableSafeZone: every pixel of the maskable icon that is not plain
// background lies within the central circle of diameter 80%.
func TestMaskableSafeZone(t *testing.T) {
	img, err := png.Decode(bytes.NewReader(generated(t, staticImg+"icon-maskable-512.png")))
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	c := float64(b.Dx()) / 2
	r := 0.4 * float64(b.Dx())
	marked := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA) == stone {
				continue
			}
			marked++
			if d := math.Hypot(float64(x)+0.5-c, float64(y)+0.5-c); d > r {
				t.Fatalf("pixel (%d,%d) is %.1f px from the centre, outside the %.1f px safe zone", x, y, d, r)
			}
		}
	}
	if marked < b.Dx()*b.Dy()/10 {
		t.Errorf("the mark covers only %d pixels: too small", marked)
	}
}

// TestTransparentIconsFill checks that the transparent icons use their
// canvas: the mark reaches close to every edge.
func TestTransparentIconsFill(t *testing.T) {
	img, err := png.Decode(bytes.NewReader(generated(t, staticImg+"icon-512.png")))
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := image.Pt(1<<30, 1<<30), image.Pt(-1, -1)
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if _, _, _, a := img.At(x, y).RGBA(); a != 0 {
				lo = image.Pt(min(lo.X, x), min(lo.Y, y))
				hi = image.Pt(max(hi.X, x), max(hi.Y, y))
			}
		}
	}
	if lo.X > 64 || lo.Y > 64 || hi.X < 512-64 || hi.Y < 512-64 {
		t.Errorf("mark spans %v-%v of 512x512: too much empty margin", lo, hi)
	}
}
