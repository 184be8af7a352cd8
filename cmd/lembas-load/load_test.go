package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestContentSeq(t *testing.T) {
	cases := map[string]int{
		`data: {"choices":[{"delta":{"content":"tok17 "},"index":0}]}` + "\n": 17,
		`data:{"choices":[{"delta":{"content":"tok3 \n\n"}}]}`:                3,
		`data: {"choices":[{"delta":{"content":"","role":"assistant"}}]}`:     0,
		`: keepalive`:  0,
		`data: [DONE]`: 0,
	}
	for line, want := range cases {
		if got := contentSeq([]byte(line)); got != want {
			t.Errorf("contentSeq(%q) = %d, want %d", line, got, want)
		}
	}
}

func TestReadEventsTakesTheHighestTokenOfEachEvent(t *testing.T) {
	stream := "retry: 2000\n\n: keepalive\n\nevent: status\ndata: <p>Writing…</p>\n\n" +
		"event: render\ndata: <p>tok1 tok2 tok3</p>\ndata: <p>tok4 tok5</p>\n\n" +
		"event: metrics\ndata: 12 tokens\n\nevent: done\ndata: <p>tok1 … tok9</p>\n\nevent: title\ndata: x\n\n"
	type ev struct {
		name string
		seq  int
	}
	var got []ev
	err := readEvents(strings.NewReader(stream), func(name string, seq int) bool {
		got = append(got, ev{name, seq})
		return name != "done"
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []ev{{"status", 0}, {"render", 5}, {"metrics", 0}, {"done", 9}}
	if !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
}

func TestPeakOpen(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	outs := []outcome{
		{opened: ms(1), ended: ms(10)},
		{opened: ms(2), ended: ms(5)},
		{opened: ms(5), ended: ms(12)}, // starts as the second ends
		{opened: ms(11), ended: ms(20)},
		{}, // never opened
	}
	if got := peakOpen(outs); got != 2 {
		t.Fatalf("peak %d, want 2", got)
	}
}

func TestScriptNumbersEveryToken(t *testing.T) {
	r := script(45, 10)
	if len(r.Deltas) != 45 || r.Deltas[0] != "tok1 " || r.Deltas[19] != "tok20 \n\n" || r.Deltas[44] != "tok45 " {
		t.Fatalf("deltas %q", r.Deltas)
	}
}

// A small run end to end: a real LLeMbas, the fake behind the proxy, a
// few followers; every reply is held and every figure is measured.
func TestASmallRunHoldsEveryReply(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server and streams for a few seconds")
	}
	up, err := startUpstream(loadModel)
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	in, err := startInstance(up.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := in.stop(); err != nil {
			t.Error(err)
		}
	}()
	c, err := newClient(in, 8)
	if err != nil {
		t.Fatal(err)
	}
	o := options{parallel: 2, concurrency: 6, tokens: 30, tps: 50, duration: 30 * time.Second,
		gap: 150 * time.Millisecond, ramp: 3}
	rows, err := firstFrames(t.Context(), c, up, o, 4, o.gap, "1")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || !strings.Contains(rows[0].measured, "(4 replies") {
		t.Fatalf("first frames: %+v", rows)
	}
	rows, err = concurrent(t.Context(), c, up, o, 0)
	if err != nil {
		t.Fatal(err)
	}
	if rows[0].measured != "6 of 6" {
		t.Fatalf("held: %+v", rows)
	}
	if !strings.HasPrefix(rows[1].measured, "p50 ") || strings.Contains(rows[1].measured, "(0 tokens)") {
		t.Fatalf("frame delays: %+v", rows[1])
	}
	if w, e, first := in.log.counts(); e > 0 || w > 0 {
		t.Fatalf("LLeMbas logged %d warnings, %d errors: %v", w, e, first)
	}
}
