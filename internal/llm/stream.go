package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Chunk is what one stream event added. Reasoning is the model's
// thinking when the server separates it (reasoning_content or reasoning);
// thinking inline in Content as <think> is the ThinkSplitter's job.
type Chunk struct {
	Content      string
	Reasoning    string
	ToolCalls    []ToolCallDelta
	FinishReason string // "stop", "length", "tool_calls", … on the last chunk of a choice
	// Usage, when the server reported it: usually once, in a final chunk
	// of its own; some servers repeat a running total, so keep the last.
	Usage   *Usage
	Timings *Timings // llama.cpp's own figures, when it sent them
}

func (c Chunk) empty() bool {
	return c.Content == "" && c.Reasoning == "" && len(c.ToolCalls) == 0 &&
		c.FinishReason == "" && c.Usage == nil && c.Timings == nil
}

// ToolCallDelta is one fragment of a tool call. The id and name arrive
// once; the arguments arrive in pieces to be joined, keyed by Index (see
// ToolCallAssembler).
type ToolCallDelta struct {
	Index     int // -1 when the server sent no index
	ID        string
	Name      string
	Arguments string
}

// Usage is what the server said a request cost. llama.cpp, Ollama and
// friends often send none: then there is no Usage, not a zero one.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	TotalTokens      int
	ReasoningTokens  int // of CompletionTokens, when stated
	CachedTokens     int // of PromptTokens, when stated
}

// Timings are llama.cpp's measurements of a reply.
type Timings struct {
	PromptTokens    int
	PromptMS        float64
	PredictedTokens int
	PredictedMS     float64
}

// Stream is a chat completion being received. Next returns what each
// event added until io.EOF; Close releases the connection and may be
// called at any time, from any goroutine, to abort a Next that is
// waiting. Cancelling the context given to Client.Stream does the same.
type Stream struct {
	t       target
	parent  context.Context
	ctx     context.Context
	cancel  context.CancelCauseFunc
	body    io.ReadCloser
	events  *eventReader
	idle    *time.Timer
	idleFor time.Duration // the limit named when time runs out
	total   bool          // idleFor is a total deadline, not a gap (Complete reading a stream)

	pending  []Chunk // a non-streamed answer, replayed as chunks
	finished bool    // a finish_reason arrived
	err      error   // sticky: io.EOF or the error that ended the stream

	closeOnce sync.Once
	closed    atomic.Bool // after Close, reads no longer re-arm the idle timer
}

// Stream starts a streaming chat completion (POST {BaseURL}/chat/completions
// with stream true). A non-2xx answer is an *Error with what the server
// said. The stream ends with io.EOF after [DONE], or after the connection
// closes once a finish_reason has arrived; a connection that closes before
// that is a KindInterrupted error, an {"error":…} event a KindUpstream
// one. The stream ends, too, when nothing arrives for the client's
// StreamIdleTimeout. Close the stream when done with it; reaching its end
// releases the connection as well.
func (c *Client) Stream(ctx context.Context, ep Endpoint, req ChatRequest) (*Stream, error) {
	u, t, err := resolve(ep, "/chat/completions")
	if err != nil {
		return nil, err
	}
	body, err := req.body(true)
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancelCause(ctx)
	s := &Stream{t: t, parent: ctx, ctx: sctx, cancel: cancel, idleFor: c.opts.StreamIdleTimeout}
	if s.idleFor > 0 {
		s.idle = time.AfterFunc(s.idleFor, func() { cancel(errTooSlow) })
	}
	hreq, err := c.newRequest(sctx, ep, http.MethodPost, u, body, "text/event-stream")
	if err != nil {
		s.release()
		return nil, err
	}
	resp, err := c.hc.Do(hreq)
	if err != nil {
		err = transportError(ctx, sctx, t, s.idleFor, true, err)
		s.release()
		return nil, err
	}
	s.body = resp.Body
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		err := statusError(t, resp)
		s.release()
		return nil, err
	}
	s.touch()
	if isJSONContentType(resp.Header.Get("Content-Type")) {
		// The server ignored stream:true and answered in one piece.
		raw, tooBig, err := readAll(&idleReader{r: resp.Body, s: s})
		if err != nil {
			err = s.readError(err)
			s.release()
			return nil, err
		}
		comp, err := decodeCompletion(t, raw, tooBig)
		s.release()
		if err != nil {
			return nil, err
		}
		s.pending = comp.chunks()
		return s, nil
	}
	s.events = newEventReader(&idleReader{r: resp.Body, s: s}, c.opts.MaxLineBytes)
	return s, nil
}

// decodeStream reads a stream from r with no connection behind it: for
// tests, fuzzing and benchmarks of the decoder.
func decodeStream(r io.Reader, maxLine int) *Stream {
	ctx, cancel := context.WithCancelCause(context.Background())
	t := target{origin: "http://upstream.test", url: "http://upstream.test/v1/chat/completions"}
	return &Stream{t: t, parent: context.Background(), ctx: ctx, cancel: cancel, events: newEventReader(r, maxLine)}
}

// Next returns what the next event added. Events that add nothing (the
// role-only first chunk, keepalives) are skipped. At the end it returns
// io.EOF, or the error that ended the stream, and keeps returning it.
func (s *Stream) Next() (Chunk, error) {
	for {
		if len(s.pending) > 0 {
			c := s.pending[0]
			s.pending = s.pending[1:]
			return c, nil
		}
		if s.err != nil {
			return Chunk{}, s.err
		}
		if s.events == nil {
			s.err = io.EOF
			continue
		}
		ev, err := s.events.next()
		if err != nil {
			s.fail(s.endError(err))
			continue
		}
		chunk, done, err := s.decode(ev)
		if err != nil {
			s.fail(err)
			continue
		}
		if done {
			s.drain()
			s.fail(io.EOF)
			continue
		}
		if chunk.FinishReason != "" {
			s.finished = true
		}
		if chunk.empty() {
			continue
		}
		return chunk, nil
	}
}

// Close releases the stream. It is safe to call more than once, and from
// another goroutine while Next waits.
func (s *Stream) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		s.cancel(ErrClosed)
		if s.idle != nil {
			s.idle.Stop()
		}
		if s.body != nil {
			s.body.Close()
		}
	})
	return nil
}

func (s *Stream) release() { _ = s.Close() }

// drain reads what follows [DONE], normally only the end of the chunked
// body, so that the connection goes back to the pool: for a hosted
// endpoint that saves a TLS handshake on the next reply. A server that
// keeps talking, or keeps the body open, gets a moment and no more.
func (s *Stream) drain() {
	if s.body == nil {
		return
	}
	t := time.AfterFunc(100*time.Millisecond, func() { s.cancel(ErrClosed) })
	defer t.Stop()
	_, _ = io.CopyN(io.Discard, s.events.r, 4<<10)
}

func (s *Stream) fail(err error) {
	s.err = err
	s.release()
}

// touch pushes the idle deadline back.
func (s *Stream) touch() {
	if s.idle != nil && !s.closed.Load() {
		s.idle.Reset(s.idleFor)
	}
}

// endError explains why the events ran out.
func (s *Stream) endError(err error) error {
	switch {
	case errors.Is(err, errLineTooLong):
		return &Error{Kind: KindBadResponse, URL: s.t.url, Err: err,
			Message: fmt.Sprintf("%s sent a stream line longer than the limit; stopped reading.", s.t.origin)}
	case err == io.EOF && s.finished:
		return io.EOF
	case err == io.EOF:
		return &Error{Kind: KindInterrupted, URL: s.t.url, Err: io.ErrUnexpectedEOF,
			Message: fmt.Sprintf("The connection to %s closed before the reply was finished.", s.t.origin)}
	}
	return s.readError(err)
}

// readError explains a failed read of the body.
func (s *Stream) readError(err error) error {
	if s.parent.Err() != nil || context.Cause(s.ctx) != nil {
		return transportError(s.parent, s.ctx, s.t, s.idleFor, !s.total, err)
	}
	return &Error{Kind: KindInterrupted, URL: s.t.url, Err: err,
		Message: fmt.Sprintf("The connection to %s broke before the reply was finished.", s.t.origin)}
}

// decode reads one event: a chunk, the [DONE] marker, or an error object.
func (s *Stream) decode(ev sseEvent) (Chunk, bool, error) {
	data := bytes.TrimSpace(ev.data)
	if len(data) == 0 {
		return Chunk{}, false, nil
	}
	if bytes.Equal(data, []byte("[DONE]")) {
		return Chunk{}, true, nil
	}
	if ev.name == "error" {
		said := serverSays(data)
		return Chunk{}, false, upstreamError(s.t, said, 0)
	}
	c, said, status, err := decodeChunk(data)
	if said != "" {
		return Chunk{}, false, upstreamError(s.t, said, status)
	}
	if err != nil {
		if ev.atEOF {
			return Chunk{}, false, &Error{Kind: KindInterrupted, URL: s.t.url, Err: err,
				Message: fmt.Sprintf("The connection to %s closed in the middle of the reply.", s.t.origin)}
		}
		return Chunk{}, false, badResponse(s.t, "a chat completion stream", data, err)
	}
	return c, false, nil
}

// The chunk as servers send it.
type wireChunk struct {
	Choices []wireChoice    `json:"choices"`
	Usage   *wireUsage      `json:"usage"`
	Timings *wireTimings    `json:"timings"` // llama.cpp
	Error   json.RawMessage `json:"error"`   // OpenAI, OpenRouter, llama.cpp mid-stream
	Object  string          `json:"object"`  // "error" in vLLM's error shape
	Message json.RawMessage `json:"message"` // vLLM's error shape
	Code    flexInt         `json:"code"`
}

type wireChoice struct {
	Index        flexInt     `json:"index"`
	Delta        *wireDelta  `json:"delta"`
	Message      *wireDelta  `json:"message"` // a whole message where a delta belongs
	FinishReason *flexString `json:"finish_reason"`
}

type wireDelta struct {
	Content          text                `json:"content"`
	ReasoningContent text                `json:"reasoning_content"` // llama.cpp, vLLM (older), DeepSeek, LM Studio
	Reasoning        text                `json:"reasoning"`         // OpenRouter, Ollama, vLLM (newer)
	ToolCalls        []wireToolCallDelta `json:"tool_calls"`
}

type wireToolCallDelta struct {
	Index    *flexInt `json:"index"`
	ID       string   `json:"id"`
	Function struct {
		Name      string  `json:"name"`
		Arguments rawText `json:"arguments"`
	} `json:"function"`
}

type wireUsage struct {
	PromptTokens            flexInt `json:"prompt_tokens"`
	CompletionTokens        flexInt `json:"completion_tokens"`
	TotalTokens             flexInt `json:"total_tokens"`
	CompletionTokensDetails *struct {
		ReasoningTokens flexInt `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
	PromptTokensDetails *struct {
		CachedTokens flexInt `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

type wireTimings struct {
	PromptN     flexInt   `json:"prompt_n"`
	PromptMS    flexFloat `json:"prompt_ms"`
	PredictedN  flexInt   `json:"predicted_n"`
	PredictedMS flexFloat `json:"predicted_ms"`
}

// decodeChunk reads one chunk. said is set (with the status the error
// object carried, if any) when the chunk is an error report.
func decodeChunk(data []byte) (c Chunk, said string, status int, err error) {
	var w wireChunk
	if err := json.Unmarshal(data, &w); err != nil {
		var typeErr *json.UnmarshalTypeError
		if !errors.As(err, &typeErr) {
			return Chunk{}, "", 0, fmt.Errorf("llm: chunk: %w", err)
		}
		// A field of an unexpected type: keep what did decode.
	}
	if !blankJSON(w.Error) {
		said = excerpt(messageIn(w.Error, 0))
		if said == "" {
			said = excerpt(string(w.Error))
		}
		return Chunk{}, said, errorCode(w.Error), nil
	}
	if w.Object == "error" {
		return Chunk{}, excerpt(messageIn(w.Message, 0)), int(w.Code), nil
	}
	return w.chunk(), "", 0, nil
}

// blankJSON reports an absent or empty value: some proxies put
// "error": null (or "") on every chunk.
func blankJSON(raw json.RawMessage) bool {
	switch string(bytes.TrimSpace(raw)) {
	case "", "null", `""`, "{}", "[]", "false", "0":
		return true
	}
	return false
}

func errorCode(raw json.RawMessage) int {
	var e struct {
		Code flexInt `json:"code"`
	}
	_ = json.Unmarshal(raw, &e)
	if e.Code >= 100 && e.Code <= 599 {
		return int(e.Code)
	}
	return 0
}

func (w *wireChunk) chunk() Chunk {
	var c Chunk
	for i := range w.Choices {
		ch := &w.Choices[i]
		if ch.Index != 0 {
			continue // we ask for one choice; a second is not ours to show
		}
		d := ch.Delta
		if d == nil {
			d = ch.Message
		}
		if d != nil {
			c.Content = d.Content.Text
			// Both fields at once (vLLM while renaming one to the other)
			// carry the same text: take one, never both.
			c.Reasoning = d.ReasoningContent.Text + d.ReasoningContent.Thinking
			if c.Reasoning == "" {
				c.Reasoning = d.Reasoning.Text + d.Reasoning.Thinking
			}
			c.Reasoning += d.Content.Thinking
			for _, tc := range d.ToolCalls {
				idx := -1
				if tc.Index != nil && *tc.Index >= 0 && *tc.Index < 1<<20 {
					idx = int(*tc.Index)
				}
				c.ToolCalls = append(c.ToolCalls, ToolCallDelta{Index: idx, ID: tc.ID,
					Name: tc.Function.Name, Arguments: string(tc.Function.Arguments)})
			}
		}
		if ch.FinishReason != nil {
			c.FinishReason = string(*ch.FinishReason)
		}
		break
	}
	if u := w.Usage; u != nil {
		c.Usage = &Usage{
			PromptTokens:     int(u.PromptTokens),
			CompletionTokens: int(u.CompletionTokens),
			TotalTokens:      int(u.TotalTokens),
		}
		if u.CompletionTokensDetails != nil {
			c.Usage.ReasoningTokens = int(u.CompletionTokensDetails.ReasoningTokens)
		}
		if u.PromptTokensDetails != nil {
			c.Usage.CachedTokens = int(u.PromptTokensDetails.CachedTokens)
		}
		if c.Usage.TotalTokens == 0 {
			c.Usage.TotalTokens = c.Usage.PromptTokens + c.Usage.CompletionTokens
		}
	}
	if t := w.Timings; t != nil {
		c.Timings = &Timings{PromptTokens: int(t.PromptN), PromptMS: float64(t.PromptMS),
			PredictedTokens: int(t.PredictedN), PredictedMS: float64(t.PredictedMS)}
	}
	return c
}

// idleReader pushes the stream's idle deadline back on every read that
// brings bytes.
type idleReader struct {
	r io.Reader
	s *Stream
}

func (r *idleReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.s.touch()
	}
	return n, err
}

// isJSONContentType reports whether a Content-Type names JSON.
func isJSONContentType(ct string) bool {
	mt, _, _ := mime.ParseMediaType(ct)
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}
