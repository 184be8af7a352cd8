package web

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// sseWriter writes server-sent events. The handler goroutine that made it
// is its only user: nothing else may write to the ResponseWriter.
type sseWriter struct {
	w   io.Writer
	rc  *http.ResponseController
	buf *bufio.Writer
}

// newSSE sends the stream's headers. Buffering proxies are asked not to
// hold the stream back (a reply that arrives all at once at the end is
// the failure the release checklist names first).
func newSSE(w http.ResponseWriter) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	// A reply can stream for many minutes; the server's write timeout is
	// for ordinary pages.
	_ = rc.SetWriteDeadline(time.Time{})
	return &sseWriter{w: w, rc: rc, buf: bufio.NewWriterSize(w, 32<<10)}
}

// event writes one named event and sends it at once.
func (s *sseWriter) event(name, data string) error {
	s.queue(name, data)
	return s.flush()
}

// queue writes one named event into the buffer; flush sends it. A frame
// of several blocks is queued and flushed once. A payload with newlines becomes several
// data: lines, which the browser joins back with "\n": a raw newline in a
// single data: line would end the event early — the first code block a
// model writes.
func (s *sseWriter) queue(name, data string) {
	if name != "" {
		fmt.Fprintf(s.buf, "event: %s\n", name)
	}
	for _, line := range strings.Split(data, "\n") {
		s.buf.WriteString("data: ")
		s.buf.WriteString(strings.TrimSuffix(line, "\r"))
		s.buf.WriteByte('\n')
	}
	s.buf.WriteByte('\n')
}

// comment writes a keepalive line that no client acts on.
func (s *sseWriter) comment(text string) error {
	fmt.Fprintf(s.buf, ": %s\n\n", text)
	return s.flush()
}

// retry tells the browser how long to wait before reconnecting.
func (s *sseWriter) retry(d time.Duration) error {
	fmt.Fprintf(s.buf, "retry: %d\n\n", d.Milliseconds())
	return s.flush()
}

func (s *sseWriter) flush() error {
	if err := s.buf.Flush(); err != nil {
		return err
	}
	return s.rc.Flush()
}
