package e2e

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"testing"

	"lembas/internal/catalog"
	"lembas/internal/llm/llmtest"
)

// Helpers for the tests of connections, models and the model picker.

// addConnection adds a connection to fake through the Go API, lists its
// models and returns them in the administrator's order.
func addConnection(t *testing.T, s *site, name string, fake *llmtest.Server) (catalog.Connection, []catalog.Model) {
	t.Helper()
	ctx := context.Background()
	c, err := s.app.Catalog.CreateConnection(ctx, catalog.ConnectionForm{Name: name, BaseURL: fake.URL, Timeout: "5"})
	if err != nil {
		t.Fatalf("add the connection %s: %v", name, err)
	}
	res, err := s.app.Catalog.Discover(ctx, c.ID)
	if err != nil || res.Err != nil {
		t.Fatalf("list the models of %s: %v %v", name, err, res.Err)
	}
	models, _, err := s.app.Catalog.ListModels(ctx, catalog.Filter{ConnectionID: c.ID})
	if err != nil {
		t.Fatal(err)
	}
	return c, models
}

// tinyPNG is a small picture of two colours, as an administrator uploads
// for a model.
func tinyPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 48, 48))
	for y := range 48 {
		for x := range 48 {
			c := color.RGBA{R: 0x2e, G: 0x6b, B: 0x3a, A: 0xff}
			if (x/12+y/12)%2 == 0 {
				c = color.RGBA{R: 0xd9, G: 0xb3, B: 0x4a, A: 0xff}
			}
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// pickerOptionIDs is a JavaScript expression listing the ids of the model
// picker's options, in the order it shows them, without the option for
// "the instance default".
const pickerOptionIDs = `[...document.querySelectorAll("[data-picker-list] [role=option]")]
	.map(o => o.id).filter(id => id !== "default_model-none")`

// pickerIDs turns model ids into the ids of their picker options.
func pickerIDs(modelIDs []string) []string {
	out := make([]string, len(modelIDs))
	for i, id := range modelIDs {
		out[i] = "default_model-" + id
	}
	return out
}
