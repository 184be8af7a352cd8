package catalog

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lembas/internal/fault"
)

func testImage(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			c := color.NRGBA{R: 220, G: 30, B: 30, A: 255} // left half red
			if x >= w/2 {
				c = color.NRGBA{R: 30, G: 30, B: 220, A: 255} // right half blue
			}
			c.G = uint8((x*7 + y*13) % 64) // some texture, so the data is not trivially small
			img.SetNRGBA(x, y, c)
		}
	}
	return img
}

func pngBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, testImage(w, h)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func pngReader(t *testing.T, w, h int) io.Reader { return bytes.NewReader(pngBytes(t, w, h)) }

func jpegBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, testImage(w, h), &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// withExifOrientation inserts an APP1 segment carrying orientation o (and a
// marker string, to check that metadata is dropped) after a JPEG's SOI.
func withExifOrientation(j []byte, o uint16) []byte {
	var tiff bytes.Buffer
	tiff.WriteString("MM")
	binary.Write(&tiff, binary.BigEndian, uint16(42))
	binary.Write(&tiff, binary.BigEndian, uint32(8)) // IFD0 right after the header
	binary.Write(&tiff, binary.BigEndian, uint16(1)) // one entry
	binary.Write(&tiff, binary.BigEndian, uint16(0x0112))
	binary.Write(&tiff, binary.BigEndian, uint16(3)) // SHORT
	binary.Write(&tiff, binary.BigEndian, uint32(1))
	binary.Write(&tiff, binary.BigEndian, o)
	binary.Write(&tiff, binary.BigEndian, uint16(0))
	binary.Write(&tiff, binary.BigEndian, uint32(0)) // no next IFD
	tiff.WriteString("camera-serial-SECRET")
	seg := append([]byte("Exif\x00\x00"), tiff.Bytes()...)
	var out bytes.Buffer
	out.Write(j[:2])
	out.Write([]byte{0xFF, 0xE1})
	binary.Write(&out, binary.BigEndian, uint16(len(seg)+2))
	out.Write(seg)
	out.Write(j[2:])
	return out.Bytes()
}

// solidWebP writes a lossless WebP of one colour. With one symbol in each
// of the five prefix codes, every pixel costs zero bits, so the whole
// bitstream is a header and five tiny codes.
func solidWebP(w, h int, c color.NRGBA) []byte {
	var bw bitWriter
	bw.write(0x2f, 8) // VP8L signature
	bw.write(uint64(w-1), 14)
	bw.write(uint64(h-1), 14)
	bw.write(1, 1)                                       // alpha is used
	bw.write(0, 3)                                       // version
	bw.write(0, 1)                                       // no transform
	bw.write(0, 1)                                       // no colour cache
	bw.write(0, 1)                                       // no meta prefix codes
	for _, sym := range []uint8{c.G, c.R, c.B, c.A, 0} { // green, red, blue, alpha, distance
		bw.write(1, 1) // simple code
		bw.write(0, 1) // one symbol
		if sym < 2 {
			bw.write(0, 1)
			bw.write(uint64(sym), 1)
		} else {
			bw.write(1, 1)
			bw.write(uint64(sym), 8)
		}
	}
	payload := append(bw.bytes(), 0, 0, 0, 0)
	if len(payload)%2 == 1 {
		payload = append(payload, 0)
	}
	var out bytes.Buffer
	out.WriteString("RIFF")
	binary.Write(&out, binary.LittleEndian, uint32(4+8+len(payload)))
	out.WriteString("WEBPVP8L")
	binary.Write(&out, binary.LittleEndian, uint32(len(payload)))
	out.Write(payload)
	return out.Bytes()
}

func nrgba(c color.Color) color.NRGBA { return color.NRGBAModel.Convert(c).(color.NRGBA) }

type bitWriter struct {
	buf []byte
	acc uint64
	n   uint
}

func (w *bitWriter) write(v uint64, bits uint) {
	w.acc |= v << w.n
	w.n += bits
	for w.n >= 8 {
		w.buf = append(w.buf, byte(w.acc))
		w.acc >>= 8
		w.n -= 8
	}
}

func (w *bitWriter) bytes() []byte {
	if w.n > 0 {
		return append(w.buf, byte(w.acc))
	}
	return w.buf
}

// pngHeaderOnly is a well-formed PNG signature and IHDR claiming w×h, with
// no pixel data at all: decoding it would try to allocate w×h×4 bytes.
func pngHeaderOnly(w, h uint32) []byte {
	var ihdr bytes.Buffer
	ihdr.WriteString("IHDR")
	binary.Write(&ihdr, binary.BigEndian, w)
	binary.Write(&ihdr, binary.BigEndian, h)
	ihdr.Write([]byte{8, 6, 0, 0, 0}) // 8-bit RGBA, no interlace
	var out bytes.Buffer
	out.WriteString("\x89PNG\r\n\x1a\n")
	binary.Write(&out, binary.BigEndian, uint32(13))
	out.Write(ihdr.Bytes())
	binary.Write(&out, binary.BigEndian, crc32.ChecksumIEEE(ihdr.Bytes()))
	return out.Bytes()
}

// withTextChunk puts a tEXt chunk after a PNG's IHDR.
func withTextChunk(p []byte, text string) []byte {
	at := 8 + 4 + 4 + 13 + 4
	chunk := append([]byte("tEXt"), []byte("Comment\x00"+text)...)
	var out bytes.Buffer
	out.Write(p[:at])
	binary.Write(&out, binary.BigEndian, uint32(len(chunk)-4))
	out.Write(chunk)
	binary.Write(&out, binary.BigEndian, crc32.ChecksumIEEE(chunk))
	out.Write(p[at:])
	return out.Bytes()
}

func gifBytes(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := gif.Encode(&b, testImage(8, 8), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// storedAvatar decodes the model's stored picture.
func (e *env) storedAvatar(t *testing.T, id string) (image.Image, []byte, string) {
	t.Helper()
	path, err := e.s.AvatarPath(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(path) != filepath.Join(e.filesDir, "avatars") || !validAvatarName(filepath.Base(path)) {
		t.Fatalf("stored at %s", path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the stored avatar is not a PNG: %v", err)
	}
	return img, b, path
}

func TestAvatarAccepted(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	id := e.seed(t, "m")["m"]
	for _, tc := range []struct {
		name  string
		data  []byte
		w, h  int
		check func(t *testing.T, img image.Image)
	}{
		{"small png kept at its size", pngBytes(t, 10, 12), 10, 12, nil},
		{"wide png scaled, proportions kept", pngBytes(t, 1000, 500), 256, 128, nil},
		{"tall png at the limit", pngBytes(t, 40, MaxAvatarSide), 2, 256, nil},
		{"png metadata dropped", withTextChunk(pngBytes(t, 20, 20), "owner-SECRET"), 20, 20, nil},
		{"jpeg", jpegBytes(t, 640, 480), 256, 192, nil},
		{"jpeg turned upright by EXIF", withExifOrientation(jpegBytes(t, 40, 20), 6), 20, 40,
			func(t *testing.T, img image.Image) {
				// The source's left half (red) is on top once turned clockwise.
				top, bottom := nrgba(img.At(10, 5)), nrgba(img.At(10, 35))
				if top.R < 150 || top.B > 100 || bottom.B < 150 || bottom.R > 100 {
					t.Fatalf("not turned: top %v, bottom %v", top, bottom)
				}
			}},
		{"webp", solidWebP(300, 30, color.NRGBA{R: 10, G: 200, B: 30, A: 255}), 256, 25,
			func(t *testing.T, img image.Image) {
				if c := nrgba(img.At(100, 10)); c.G < 190 || c.R > 20 {
					t.Fatalf("colour %v", c)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := e.s.SetAvatar(ctx, id, bytes.NewReader(tc.data)); err != nil {
				t.Fatal(err)
			}
			img, raw, _ := e.storedAvatar(t, id)
			if b := img.Bounds(); b.Dx() != tc.w || b.Dy() != tc.h {
				t.Fatalf("stored %v, want %dx%d", b, tc.w, tc.h)
			}
			if bytes.Contains(raw, []byte("SECRET")) || bytes.Contains(raw, []byte("Exif")) {
				t.Fatal("metadata survived re-encoding")
			}
			if tc.check != nil {
				tc.check(t, img)
			}
			entries, _ := os.ReadDir(filepath.Join(e.filesDir, "avatars"))
			if len(entries) != 1 {
				t.Fatalf("%d files: the replaced picture was not deleted", len(entries))
			}
		})
	}
}

func TestAvatarRefused(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	id := e.seed(t, "m")["m"]
	good := pngBytes(t, 64, 64)
	huge := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, MaxAvatarBytes)...)
	for _, tc := range []struct {
		name string
		data []byte
		want error
	}{
		{"svg", []byte(`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>`), errAvatarType},
		{"svg without prolog", []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`), errAvatarType},
		{"gif", gifBytes(t), errAvatarType},
		{"text", []byte("just some text, named avatar.png"), errAvatarType},
		{"empty", nil, errAvatarType},
		{"riff that is not webp", append([]byte("RIFF\x10\x00\x00\x00WAVEfmt "), make([]byte, 16)...), errAvatarType},
		{"truncated png", good[:len(good)/2], errAvatarUnreadable},
		{"png signature only", good[:8], errAvatarUnreadable},
		{"truncated jpeg", jpegBytes(t, 64, 64)[:300], errAvatarUnreadable},
		{"webp header only", solidWebP(10, 10, color.NRGBA{A: 255})[:16], errAvatarUnreadable},
		{"huge dimensions", pngHeaderOnly(100000, 100000), errAvatarTooWide},
		{"one pixel too wide", pngBytes(t, MaxAvatarSide+1, 1), errAvatarTooWide},
		{"over 5 MB", huge, errAvatarTooBig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := e.s.SetAvatar(ctx, id, bytes.NewReader(tc.data))
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			wantField(t, err, "avatar")
			if fe, _ := fault.As(err); strings.Contains(fe.Message, "%") || !strings.HasSuffix(fe.Message, ".") {
				t.Fatalf("not a plain sentence: %q", fe.Message)
			}
		})
	}
	if _, err := e.s.AvatarPath(ctx, id); !errors.Is(err, ErrNoAvatar) {
		t.Fatalf("a refused upload left a picture: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(e.filesDir, "avatars")); len(entries) != 0 {
		t.Fatalf("a refused upload left %d files", len(entries))
	}
	if err := e.s.SetAvatar(ctx, "nope", bytes.NewReader(good)); fault.KindOf(err) != fault.NotFound {
		t.Fatalf("%v", err)
	}
}

func TestAvatarFileFollowsTheRow(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.conn(t, "A", "http://a/v1")
	e.lister.set(c.BaseURL, named("x", "y", "z")...)
	e.discover(t, c.ID)
	ms := e.models(t)
	for _, n := range []string{"x", "y", "z"} {
		must(t, e.s.SetAvatar(ctx, ms[n].ID, pngReader(t, 8, 8)))
	}
	_, _, pathX := e.storedAvatar(t, ms["x"].ID)
	_, _, pathY := e.storedAvatar(t, ms["y"].ID)
	_, _, pathZ := e.storedAvatar(t, ms["z"].ID)
	gone := func(p string) bool { _, err := os.Stat(p); return errors.Is(err, os.ErrNotExist) }

	must(t, e.s.ClearAvatar(ctx, ms["x"].ID))
	if !gone(pathX) {
		t.Fatal("cleared picture kept")
	}
	if m, _ := e.s.GetModel(ctx, ms["x"].ID); m.HasAvatar || m.AvatarURL() != "" {
		t.Fatalf("%+v", m)
	}
	must(t, e.s.DeleteModel(ctx, ms["y"].ID))
	if !gone(pathY) {
		t.Fatal("deleted model's picture kept")
	}
	must(t, e.s.DeleteConnection(ctx, c.ID))
	if !gone(pathZ) {
		t.Fatal("deleted connection's model picture kept")
	}
}

func TestAvatarPathRefusesForeignNames(t *testing.T) {
	e := newEnv(t)
	id := e.seed(t, "m")["m"]
	if _, err := e.db.W.Exec(`UPDATE models SET avatar_file = '../../lembas.db' WHERE id = ?`, id); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.AvatarPath(context.Background(), id); !errors.Is(err, ErrNoAvatar) {
		t.Fatalf("%v", err)
	}
	e.s.removeAvatarFile("../../lembas.db")
	if _, err := os.Stat(filepath.Join(e.dir, "lembas.db")); err != nil {
		t.Fatal("a name from the database reached os.Remove")
	}
}

func TestJPEGOrientationParser(t *testing.T) {
	j := jpegBytes(t, 8, 8)
	for o := uint16(1); o <= 8; o++ {
		if got := jpegOrientation(withExifOrientation(j, o)); got != int(o) {
			t.Errorf("orientation %d read as %d", o, got)
		}
	}
	for _, bad := range [][]byte{j, j[:3], {0xFF, 0xD8, 0xFF, 0xE1, 0xFF, 0xFF}, withExifOrientation(j, 9)} {
		if got := jpegOrientation(bad); got != 1 {
			t.Errorf("got %d from a JPEG without a usable orientation", got)
		}
	}
}
