package llm

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

func TestEventReader(t *testing.T) {
	type ev struct{ name, data string }
	tests := []struct {
		name string
		in   string
		want []ev
		err  error // after the events; io.EOF for a clean end
	}{
		{"one event", "data: a\n\n", []ev{{"", "a"}}, io.EOF},
		{"no space", "data:a\n\n", []ev{{"", "a"}}, io.EOF},
		{"two spaces keep one", "data:  a\n\n", []ev{{"", " a"}}, io.EOF},
		{"multi-line joined", "data: a\ndata: b\ndata:\n\n", []ev{{"", "a\nb\n"}}, io.EOF},
		{"CRLF", "data: a\r\n\r\ndata: b\r\n\r\n", []ev{{"", "a"}, {"", "b"}}, io.EOF},
		{"lone CR", "data: a\r\rdata: b\r\r", []ev{{"", "a"}, {"", "b"}}, io.EOF},
		{"comments skipped", ": keepalive\n:\ndata: a\n: mid\n\n", []ev{{"", "a"}}, io.EOF},
		{"event names", "event: error\ndata: x\n\nevent: message\ndata: y\n\ndata: z\n\n", []ev{{"error", "x"}, {"message", "y"}, {"", "z"}}, io.EOF},
		{"name without data is dropped", "event: ping\n\ndata: a\n\n", []ev{{"", "a"}}, io.EOF},
		{"unknown fields skipped", "id: 7\nretry: 10\nfoo\ndata: a\n\n", []ev{{"", "a"}}, io.EOF},
		{"blank lines between", "\n\n\ndata: a\n\n\n\n", []ev{{"", "a"}}, io.EOF},
		{"open at the end", "data: a\n\ndata: b", []ev{{"", "a"}, {"", "b"}}, io.EOF},
		{"open at the end after a newline", "data: b\n", []ev{{"", "b"}}, io.EOF},
		{"BOM", "\xEF\xBB\xBFdata: a\n\n", []ev{{"", "a"}}, io.EOF},
		{"empty", "", nil, io.EOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Whole, and one byte per read, which splits every line
			// across reads.
			for _, r := range []io.Reader{strings.NewReader(tt.in), iotest.OneByteReader(strings.NewReader(tt.in))} {
				e := newEventReader(r, 1<<10)
				var got []ev
				var err error
				for {
					var x sseEvent
					x, err = e.next()
					if err != nil {
						break
					}
					got = append(got, ev{x.name, string(x.data)})
				}
				if !reflect.DeepEqual(got, tt.want) || !errors.Is(err, tt.err) {
					t.Fatalf("got %q, %v; want %q, %v", got, err, tt.want, tt.err)
				}
			}
		})
	}
}

func TestEventReaderLimits(t *testing.T) {
	tests := []struct{ name, in string }{
		{"one long line", "data: " + strings.Repeat("x", 5000) + "\n\n"},
		{"one long line without an ending", strings.Repeat("x", 5000)},
		{"many data lines in one event", strings.Repeat("data: "+strings.Repeat("x", 100)+"\n", 100)},
		{"one long comment", ":" + strings.Repeat("x", 5000) + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEventReader(strings.NewReader(tt.in), 1024)
			var err error
			for err == nil {
				_, err = e.next()
			}
			if !errors.Is(err, errLineTooLong) {
				t.Fatalf("err = %v", err)
			}
			if cap(e.line) > 2048 || cap(e.data) > 2048 {
				t.Fatalf("buffers grew to %d / %d", cap(e.line), cap(e.data))
			}
		})
	}
}

// A broken connection is not an end: a half line before it is dropped.
func TestEventReaderBrokenConnection(t *testing.T) {
	broken := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("data: a\n\ndata: {\"cho"), iotest.ErrReader(broken))
	e := newEventReader(r, 1024)
	if x, err := e.next(); err != nil || string(x.data) != "a" {
		t.Fatalf("first: %q %v", x.data, err)
	}
	if _, err := e.next(); !errors.Is(err, broken) {
		t.Fatalf("second: %v", err)
	}
	if _, err := e.next(); !errors.Is(err, broken) {
		t.Fatalf("sticky: %v", err)
	}
}
