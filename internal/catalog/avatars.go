package catalog

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/image/draw"
	"golang.org/x/image/webp"

	"lembas/internal/fault"
)

// Limits on an avatar upload.
const (
	MaxAvatarBytes = 5 << 20 // input, before anything is decoded
	MaxAvatarSide  = 4096    // pixels, checked from the header before decoding
	AvatarSize     = 256     // the stored picture fits in this square
)

// ErrNoAvatar is returned by AvatarPath for a model without a picture.
var ErrNoAvatar = fault.New(fault.NotFound, "This model has no picture.")

var (
	errAvatarType       = fault.Field("avatar", "A model's picture must be a PNG, JPEG or WebP image.")
	errAvatarUnreadable = fault.Field("avatar", "That picture could not be read; it may be damaged or cut short.")
	errAvatarTooBig     = fault.Field("avatar", fmt.Sprintf("A model's picture can be at most %d MB.", MaxAvatarBytes>>20))
	errAvatarTooWide    = fault.Field("avatar", fmt.Sprintf("A model's picture can be at most %d pixels on each side.", MaxAvatarSide))
)

// validAvatarName reports whether name has the only shape SetAvatar
// writes (32 lower-case hex digits and .png); anything else read from the
// database is never joined onto a path.
func validAvatarName(name string) bool {
	stem, ok := strings.CutSuffix(name, ".png")
	if !ok || len(stem) != 32 {
		return false
	}
	for _, c := range stem {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func (s *Service) avatarDir() string { return filepath.Join(s.filesDir, "avatars") }

// SetAvatar stores a model's picture. The upload is typed by its bytes
// (PNG, JPEG or WebP; never by a file name), its dimensions are read from
// the header and checked before anything is decoded, and it is stored
// re-encoded as a PNG of at most AvatarSize pixels a side, which drops any
// metadata. The picture it replaces is deleted.
func (s *Service) SetAvatar(ctx context.Context, id string, r io.Reader) error {
	var one int
	if err := s.db.R.QueryRowContext(ctx, `SELECT 1 FROM models WHERE id = ?`, id).Scan(&one); err != nil {
		return noRows(err, "model "+id, ErrNoModel)
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxAvatarBytes+1))
	if err != nil {
		return fmt.Errorf("catalog: model %s: read avatar: %w", id, err)
	}
	if len(data) > MaxAvatarBytes {
		return errAvatarTooBig
	}
	encoded, err := processAvatar(data)
	if err != nil {
		return err
	}
	name, err := s.writeAvatarFile(encoded)
	if err != nil {
		return fmt.Errorf("catalog: model %s: %w", id, err)
	}
	var old string
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT avatar_file FROM models WHERE id = ?`, id).Scan(&old); err != nil {
			return noRows(err, "model "+id, ErrNoModel)
		}
		_, err := tx.ExecContext(ctx, `UPDATE models SET avatar_file = ?, updated_at = ? WHERE id = ?`, name, s.nowMillis(), id)
		if err != nil {
			return fmt.Errorf("catalog: model %s: set avatar: %w", id, err)
		}
		return nil
	})
	if err != nil {
		s.removeAvatarFile(name)
		return err
	}
	s.removeAvatarFile(old)
	return nil
}

// ClearAvatar removes a model's picture.
func (s *Service) ClearAvatar(ctx context.Context, id string) error {
	var old string
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT avatar_file FROM models WHERE id = ?`, id).Scan(&old); err != nil {
			return noRows(err, "model "+id, ErrNoModel)
		}
		_, err := tx.ExecContext(ctx, `UPDATE models SET avatar_file = '', updated_at = ? WHERE id = ?`, s.nowMillis(), id)
		if err != nil {
			return fmt.Errorf("catalog: model %s: clear avatar: %w", id, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.removeAvatarFile(old)
	return nil
}

// AvatarPath returns the file holding a model's picture, a PNG, for
// serving. It checks nothing about who asks.
func (s *Service) AvatarPath(ctx context.Context, id string) (string, error) {
	var name string
	if err := s.db.R.QueryRowContext(ctx, `SELECT avatar_file FROM models WHERE id = ?`, id).Scan(&name); err != nil {
		return "", noRows(err, "model "+id, ErrNoModel)
	}
	if name == "" || !validAvatarName(name) {
		return "", fmt.Errorf("catalog: model %s: %w", id, ErrNoAvatar)
	}
	return filepath.Join(s.avatarDir(), name), nil
}

func (s *Service) writeAvatarFile(data []byte) (string, error) {
	if err := os.MkdirAll(s.avatarDir(), 0o700); err != nil {
		return "", fmt.Errorf("avatar directory: %w", err)
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("avatar name: %w", err)
	}
	name := hex.EncodeToString(b) + ".png"
	path := filepath.Join(s.avatarDir(), name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("write avatar: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return "", fmt.Errorf("write avatar: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return "", fmt.Errorf("write avatar: %w", err)
	}
	return name, nil
}

// removeAvatarFile deletes a picture no row names any more. A failure
// leaves an orphan file, which costs disk and nothing else; it is logged,
// not returned, because the row change it follows has already happened.
func (s *Service) removeAvatarFile(name string) {
	if name == "" || !validAvatarName(name) {
		return
	}
	err := os.Remove(filepath.Join(s.avatarDir(), name))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.log.Warn("could not delete a replaced model picture", "file", name, "error", err)
	}
}

// sniffImage names the format of data by its first bytes: "png", "jpeg",
// "webp", or "" for anything else (SVG, GIF, text…).
func sniffImage(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return "png"
	case bytes.HasPrefix(data, []byte{0xFF, 0xD8, 0xFF}):
		return "jpeg"
	case len(data) >= 12 && string(data[0:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return "webp"
	}
	return ""
}

// processAvatar turns an upload into the stored PNG.
func processAvatar(data []byte) ([]byte, error) {
	var decodeConfig func(io.Reader) (image.Config, error)
	var decode func(io.Reader) (image.Image, error)
	kind := sniffImage(data)
	switch kind {
	case "png":
		decodeConfig, decode = png.DecodeConfig, png.Decode
	case "jpeg":
		decodeConfig, decode = jpeg.DecodeConfig, jpeg.Decode
	case "webp":
		decodeConfig, decode = webp.DecodeConfig, webp.Decode
	default:
		return nil, errAvatarType
	}
	cfg, err := decodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, errAvatarUnreadable
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return nil, errAvatarUnreadable
	}
	if cfg.Width > MaxAvatarSide || cfg.Height > MaxAvatarSide {
		return nil, errAvatarTooWide
	}
	img, err := decode(bytes.NewReader(data))
	if err != nil {
		return nil, errAvatarUnreadable
	}
	out := scaleToFit(img, AvatarSize)
	if kind == "jpeg" {
		out = orient(out, jpegOrientation(data))
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.DefaultCompression}
	if err := enc.Encode(&buf, out); err != nil {
		return nil, fmt.Errorf("catalog: encode avatar: %w", err)
	}
	return buf.Bytes(), nil
}

// scaleToFit returns img drawn into an RGBA (the destination x/image/draw
// has fast paths for) that fits a size×size square,
// keeping its proportions and never enlarging it. A large picture is first
// shrunk cheaply to twice the target, then finished with Catmull-Rom:
// Catmull-Rom over the full source costs most of a second for a photo.
func scaleToFit(img image.Image, size int) *image.RGBA {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	tw, th := w, h
	if w > size || h > size {
		if w >= h {
			tw, th = size, max(1, h*size/w)
		} else {
			tw, th = max(1, w*size/h), size
		}
	}
	src := img
	if w > 2*tw && h > 2*th {
		mid := image.NewRGBA(image.Rect(0, 0, 2*tw, 2*th))
		draw.ApproxBiLinear.Scale(mid, mid.Bounds(), img, b, draw.Src, nil)
		src = mid
	}
	dst := image.NewRGBA(image.Rect(0, 0, tw, th))
	if tw == w && th == h {
		draw.Draw(dst, dst.Bounds(), img, b.Min, draw.Src)
	} else {
		draw.CatmullRom.Scale(dst, dst.Bounds(), src, src.Bounds(), draw.Src, nil)
	}
	return dst
}

// jpegOrientation reads the EXIF orientation (1–8) from a JPEG's APP1
// segment; 1 (as stored) when there is none or it cannot be read.
// image/jpeg ignores it, and a phone photo would otherwise lie on its side.
func jpegOrientation(data []byte) int {
	i := 2 // after SOI
	for i+4 <= len(data) {
		if data[i] != 0xFF {
			return 1
		}
		marker := data[i+1]
		if marker == 0xD8 || marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7) {
			i += 2
			continue
		}
		if marker == 0xDA || marker == 0xD9 { // image data or end: no EXIF before it
			return 1
		}
		n := int(binary.BigEndian.Uint16(data[i+2 : i+4]))
		if n < 2 || i+2+n > len(data) {
			return 1
		}
		seg := data[i+4 : i+2+n]
		if marker == 0xE1 && len(seg) >= 6 && string(seg[:6]) == "Exif\x00\x00" {
			return exifOrientation(seg[6:])
		}
		i += 2 + n
	}
	return 1
}

// exifOrientation reads tag 0x0112 from the first IFD of a TIFF block.
func exifOrientation(t []byte) int {
	if len(t) < 8 {
		return 1
	}
	var bo binary.ByteOrder
	switch string(t[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return 1
	}
	if bo.Uint16(t[2:4]) != 42 {
		return 1
	}
	off := int(bo.Uint32(t[4:8]))
	if off < 8 || off+2 > len(t) {
		return 1
	}
	count := int(bo.Uint16(t[off : off+2]))
	for e := 0; e < count; e++ {
		p := off + 2 + e*12
		if p+12 > len(t) {
			return 1
		}
		if bo.Uint16(t[p:p+2]) == 0x0112 && bo.Uint16(t[p+2:p+4]) == 3 { // SHORT
			v := int(bo.Uint16(t[p+8 : p+10]))
			if v >= 1 && v <= 8 {
				return v
			}
			return 1
		}
	}
	return 1
}

// orient turns an image stored with EXIF orientation o the right way up.
func orient(src *image.RGBA, o int) *image.RGBA {
	if o <= 1 || o > 8 {
		return src
	}
	w, h := src.Bounds().Dx(), src.Bounds().Dy()
	dw, dh := w, h
	if o >= 5 {
		dw, dh = h, w
	}
	dst := image.NewRGBA(image.Rect(0, 0, dw, dh))
	for y := 0; y < dh; y++ {
		for x := 0; x < dw; x++ {
			var sx, sy int
			switch o {
			case 2: // mirrored
				sx, sy = w-1-x, y
			case 3: // upside down
				sx, sy = w-1-x, h-1-y
			case 4: // mirrored upside down
				sx, sy = x, h-1-y
			case 5: // transposed
				sx, sy = y, x
			case 6: // needs a quarter turn clockwise
				sx, sy = y, h-1-x
			case 7: // transversed
				sx, sy = w-1-y, h-1-x
			case 8: // needs a quarter turn anticlockwise
				sx, sy = w-1-y, x
			}
			si := src.PixOffset(sx+src.Rect.Min.X, sy+src.Rect.Min.Y)
			di := dst.PixOffset(x, y)
			copy(dst.Pix[di:di+4], src.Pix[si:si+4])
		}
	}
	return dst
}
