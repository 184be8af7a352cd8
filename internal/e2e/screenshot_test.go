package e2e

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// readmeScreenshot is the README's picture, relative to this package.
var readmeScreenshot = filepath.Join("..", "..", "docs", "screenshot.png")

const screenW, screenH = 1280, 800

// TestScreenshotForReadme takes 1280×800 screenshots of the home page and
// /settings in both themes and checks each is a real picture (and that
// Moria is the darker one). With LEMBAS_UPDATE_SCREENSHOT=1 it also writes
// the home page in Moria, the default theme, to docs/screenshot.png.
func TestScreenshotForReadme(t *testing.T) {
	s := startSite(t)
	tb := s.openTab(t)
	user := tb.registerFirstAccount(t)
	tb.resize(t, screenW, screenH)

	var readme []byte
	light := map[string]float64{} // mean lightness per theme
	for _, theme := range []string{"moria", "shire"} {
		if err := s.app.Auth.SetTheme(context.Background(), user.ID, theme); err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"/", "/settings"} {
			if status := tb.open(t, path); status != 200 {
				t.Fatalf("%s: status %d", path, status)
			}
			if got := tb.theme(t); got != theme {
				t.Fatalf("%s shows theme %q, want %q", path, got, theme)
			}
			// Park the mouse where it hovers nothing, so no hover style
			// from the last click shows in the picture.
			if err := chromedp.Do(tb.ctx, chromedp.MouseEvent(chromedp.MouseMoved, screenW-1, screenH-1)); err != nil {
				t.Fatal(err)
			}
			shot, err := chromedp.Run(tb.ctx, chromedp.CaptureScreenshot())
			if err != nil {
				t.Fatalf("screenshot of %s: %v", path, err)
			}
			img := checkScreenshot(t, theme+" "+path, shot)
			light[theme] += lightness(img)
			if theme == "moria" && path == "/" {
				readme = shot
			}
		}
	}
	if light["moria"] >= light["shire"] {
		t.Errorf("Moria (lightness %.2f) is not darker than the Shire (%.2f)", light["moria"]/2, light["shire"]/2)
	}
	tb.assertClean(t)

	if os.Getenv("LEMBAS_UPDATE_SCREENSHOT") == "1" {
		if err := os.WriteFile(readmeScreenshot, readme, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", readmeScreenshot)
	}
}

// checkScreenshot decodes a PNG and fails unless it is screenW×screenH and
// shows something: not one flat colour, nor almost one.
func checkScreenshot(t *testing.T, name string, shot []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("%s: not a PNG: %v", name, err)
	}
	if b := img.Bounds(); b.Dx() != screenW || b.Dy() != screenH {
		t.Fatalf("%s: %d×%d, want %d×%d", name, b.Dx(), b.Dy(), screenW, screenH)
	}
	counts := map[color.RGBA]int{}
	samples := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 4 {
		for x := b.Min.X; x < b.Max.X; x += 4 {
			counts[color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)]++
			samples++
		}
	}
	most := 0
	for _, n := range counts {
		most = max(most, n)
	}
	// A blank page is one colour; ours has text, a mark and panels.
	if len(counts) < 16 || float64(most)/float64(samples) > 0.98 {
		t.Errorf("%s looks blank: %d colours, the commonest covers %.1f%%",
			name, len(counts), 100*float64(most)/float64(samples))
	}
	return img
}

// lightness is the mean luma of img, from 0 (black) to 1 (white).
func lightness(img image.Image) float64 {
	var sum float64
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 4 {
		for x := b.Min.X; x < b.Max.X; x += 4 {
			g := color.GrayModel.Convert(img.At(x, y)).(color.Gray)
			sum += float64(g.Y) / 255
			n++
		}
	}
	return sum / float64(n)
}
