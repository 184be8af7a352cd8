package llm

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// errLineTooLong is returned when a line, or the data of one event, passes
// the limit.
var errLineTooLong = errors.New("llm: stream line over the limit")

// sseEvent is one dispatched server-sent event. data is only valid until
// the next call to next.
type sseEvent struct {
	name string
	data []byte
	// atEOF marks an event the stream ended inside (no blank line after
	// it), which may be cut short.
	atEOF bool
}

// eventReader decodes a server-sent event stream, leniently:
//
//   - lines end in \n, \r\n or a lone \r;
//   - "data:" is read with or without the space after the colon;
//   - several data: lines of one event are joined with "\n";
//   - ":" lines are comments (keepalives) and are skipped, as are id: and
//     retry: and any field we do not know;
//   - an event still open when the stream ends is dispatched, because
//     servers that close right after their last data: line exist;
//   - a line or an event's data longer than max is an error, so a server
//     cannot make us buffer without bound.
type eventReader struct {
	r       *bufio.Reader
	max     int
	line    []byte // a line longer than the bufio buffer is gathered here
	rest    []byte // what follows a lone \r, still to be read as lines
	data    []byte
	hasData bool
	name    []byte
	started bool
	err     error // sticky read error, returned once the lines run out
}

func newEventReader(r io.Reader, max int) *eventReader {
	size := 32 << 10
	if max < size {
		size = max
	}
	if size < 16 {
		size = 16
	}
	return &eventReader{r: bufio.NewReaderSize(r, size), max: max}
}

// next returns the next event that carries data. At the end of the input
// it returns the read error (io.EOF for a clean end).
func (e *eventReader) next() (sseEvent, error) {
	for {
		line, err := e.readLine()
		if err != nil {
			if errors.Is(err, errLineTooLong) {
				return sseEvent{}, err
			}
			if e.hasData && err == io.EOF {
				// The stream ended inside an event: dispatch it, and
				// report the end on the next call.
				e.err = err
				ev := e.dispatch()
				ev.atEOF = true
				return ev, nil
			}
			return sseEvent{}, err
		}
		if !e.started {
			e.started = true
			line = bytes.TrimPrefix(line, []byte("\xEF\xBB\xBF"))
		}
		if len(line) == 0 {
			if e.hasData {
				return e.dispatch(), nil
			}
			e.name = e.name[:0]
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			if len(e.data)+len(value)+1 > e.max {
				return sseEvent{}, errLineTooLong
			}
			if e.hasData {
				e.data = append(e.data, '\n')
			}
			e.data = append(e.data, value...)
			e.hasData = true
		case "event":
			e.name = append(e.name[:0], value...)
		}
	}
}

func (e *eventReader) dispatch() sseEvent {
	ev := sseEvent{name: string(e.name), data: e.data}
	e.data = e.data[:0]
	e.hasData = false
	e.name = e.name[:0]
	return ev
}

// readLine returns the next line without its ending. The slice is valid
// until the next call.
func (e *eventReader) readLine() ([]byte, error) {
	if e.rest != nil {
		return e.splitCR(e.rest), nil
	}
	if e.err != nil {
		return nil, e.err
	}
	e.line = e.line[:0]
	for {
		frag, err := e.r.ReadSlice('\n')
		switch {
		case err == nil:
			line := frag
			if len(e.line) > 0 {
				e.line = append(e.line, frag...)
				line = e.line
			}
			if len(line)-1 > e.max {
				return nil, errLineTooLong
			}
			line = line[:len(line)-1]
			if n := len(line); n > 0 && line[n-1] == '\r' {
				line = line[:n-1]
			}
			return e.splitCR(line), nil
		case errors.Is(err, bufio.ErrBufferFull):
			if len(e.line)+len(frag) > e.max {
				return nil, errLineTooLong
			}
			e.line = append(e.line, frag...)
		case err != io.EOF:
			// A broken connection: a partial line is not a line.
			e.err = err
			return nil, err
		default:
			// The end of the input: a last line without its ending is
			// still a line.
			if len(e.line)+len(frag) > e.max {
				return nil, errLineTooLong
			}
			e.line = append(e.line, frag...)
			if len(e.line) == 0 {
				return nil, err
			}
			e.err = err
			line := e.line
			if n := len(line); line[n-1] == '\r' {
				line = line[:n-1]
			}
			return e.splitCR(line), nil
		}
	}
}

// splitCR returns the first line of b, keeping what follows a lone \r for
// the next call (SSE allows \r alone as a line ending; nobody we know
// sends it, but it costs one IndexByte to honour).
func (e *eventReader) splitCR(b []byte) []byte {
	i := bytes.IndexByte(b, '\r')
	if i < 0 {
		e.rest = nil
		return b
	}
	e.rest = b[i+1:]
	return b[:i]
}
