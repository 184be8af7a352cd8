package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// ToolCall is one call the scripted model makes.
type ToolCall struct {
	ID        string // default "call_N"
	Name      string
	Arguments string // JSON text
}

// ErrorShape is how an error object mid-stream is written.
type ErrorShape int

const (
	// ErrorOpenAI: data: {"error":{"message":…,"type":…,"code":…}}, as
	// OpenAI, OpenRouter and llama.cpp send it.
	ErrorOpenAI ErrorShape = iota
	// ErrorVLLM: data: {"object":"error","message":…,"type":…,"code":…},
	// vLLM's error response without an envelope.
	ErrorVLLM
	// ErrorString: data: {"error":"…"}, a bare string, as some proxies do.
	ErrorString
	// ErrorEvent: event: error, then data: {"message":…}: a named SSE
	// event rather than an error field.
	ErrorEvent
)

// Reply scripts one answer. The zero value streams nothing but a finish;
// set what the model says and how the server behaves.
//
// A streamed reply goes out in the order real servers use: a role-only
// chunk, reasoning deltas, content deltas, tool-call fragments, a chunk
// with finish_reason, a usage chunk when asked, then data: [DONE]. "After
// n" counts the reasoning, content and tool-call deltas written.
type Reply struct {
	// What the model says.
	Content   string
	Reasoning string
	ToolCalls []ToolCall

	// ReasoningField is where reasoning deltas go: "reasoning_content"
	// (the default: llama.cpp, DeepSeek, LM Studio, vLLM before its
	// rename), "reasoning" (OpenRouter, Ollama, vLLM after), or "both"
	// (the same text in both fields, as vLLM sent during the rename).
	ReasoningField string
	// ThinkInline puts the reasoning inside content as <think>…</think>
	// (Ollama with some templates, llama.cpp without a reasoning parser,
	// most small servers). Chunk then cuts through the tags too.
	ThinkInline bool

	// Chunk is the bytes per delta (default 4, about a token), cut on rune
	// boundaries.
	Chunk int
	// Deltas, when set, are the content deltas exactly, replacing Content,
	// inline reasoning and Chunk: for splitting a tag at a chosen byte.
	Deltas []string
	// TokensPerSecond paces the deltas; 0 sends them as fast as possible.
	TokensPerSecond float64
	// Delay comes after the headers and before the first delta: prompt
	// processing.
	Delay time.Duration
	// Keepalive, when n > 0, writes a ": keepalive" comment line before
	// the first delta and after every n deltas (OpenRouter sends
	// ": OPENROUTER PROCESSING" comments; proxies send their own).
	Keepalive int
	// WholeToolCalls sends each call in one fragment with its complete
	// arguments (Ollama) rather than a name fragment followed by argument
	// pieces (OpenAI, vLLM, llama.cpp).
	WholeToolCalls bool
	// InterleaveToolCalls alternates the fragments of different calls.
	InterleaveToolCalls bool

	// Usage adds a final chunk with "choices": [] and a usage object, as
	// OpenAI, vLLM and llama.cpp do when asked with include_usage; without
	// it no usage is sent, as from Ollama and most small servers.
	Usage bool
	// UsageInFinish puts usage on the finish_reason chunk instead.
	UsageInFinish                  bool
	PromptTokens, CompletionTokens int // default: an estimate, and the number of deltas
	// Timings adds llama.cpp's timings object to the finish chunk.
	Timings bool
	// FinishReason defaults to "tool_calls" with tool calls, else "stop".
	FinishReason string
	// NoFinish leaves finish_reason null on every chunk.
	NoFinish bool

	// SSE framing quirks.
	NoDone     bool // end without data: [DONE]
	CRLF       bool // \r\n line endings
	NoSpace    bool // "data:{…}" with no space after the colon
	EventLines bool // an "event: message" line before each data line
	SplitData  bool // each payload across two data: lines, to be joined with "\n"

	// Failures.
	// Status, when not 2xx, is answered before any stream with Body (by
	// default an OpenAI-style error object carrying ErrorMessage).
	Status int
	Body   string
	// ErrorMessage sends an error object after ErrorAfter deltas (at the
	// start when ErrorAfter is 0) and ends the stream. ErrorAfter > 0
	// alone sends a stock message.
	ErrorMessage string
	ErrorAfter   int
	ErrorShape   ErrorShape
	// StallAfter > 0 stops after that many deltas and holds the
	// connection open, silent, until the client goes away.
	StallAfter int
	// DisconnectAfter > 0 drops the connection after that many deltas,
	// with no [DONE] and no end of the chunked body.
	DisconnectAfter int
	// Hang accepts the request and never sends even the headers.
	Hang bool
	// Raw, when set, is the whole streamed body, verbatim.
	Raw string
}

func (rp Reply) errorOn() bool { return rp.ErrorMessage != "" || rp.ErrorAfter > 0 }

func (s *Server) serveChat(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	raw, _ := io.ReadAll(r.Body) // record kept a copy; this is ours
	if err := json.Unmarshal(raw, &req); err != nil {
		writeError(w, http.StatusBadRequest, "The body is not valid JSON.", "invalid_request_error", "invalid_json")
		return
	}
	rp, ok := s.reply(req.Model)
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Sprintf("The model %q does not exist.", req.Model), "invalid_request_error", "model_not_found")
		return
	}
	if rp.Hang {
		s.block(r.Context())
		return
	}
	if rp.Status != 0 && (rp.Status < 200 || rp.Status > 299) {
		if rp.Body != "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(rp.Status)
			_, _ = w.Write([]byte(rp.Body))
			return
		}
		msg := rp.ErrorMessage
		if msg == "" {
			msg = http.StatusText(rp.Status)
		}
		writeError(w, rp.Status, msg, "invalid_request_error", "")
		return
	}
	if !req.Stream {
		s.writeCompletion(w, r, req.Model, rp, len(raw))
		return
	}
	s.writeStream(w, r, req.Model, rp, len(raw))
}

// message is what the scripted model says, as one assistant message.
func (rp Reply) message(field string) obj {
	msg := obj{"role": "assistant", "content": rp.Content}
	if rp.Reasoning != "" {
		if rp.ThinkInline {
			msg["content"] = "<think>" + rp.Reasoning + "</think>" + rp.Content
		} else {
			switch field {
			case "reasoning":
				msg["reasoning"] = rp.Reasoning
			case "both":
				msg["reasoning"] = rp.Reasoning
				msg["reasoning_content"] = rp.Reasoning
			default:
				msg["reasoning_content"] = rp.Reasoning
			}
		}
	}
	if len(rp.ToolCalls) > 0 {
		var calls []any
		for i, c := range rp.ToolCalls {
			calls = append(calls, obj{"id": c.id(i), "type": "function",
				"function": obj{"name": c.Name, "arguments": c.Arguments}})
		}
		msg["tool_calls"] = calls
		if rp.Content == "" {
			msg["content"] = nil
		}
	}
	return msg
}

func (c ToolCall) id(i int) string {
	if c.ID != "" {
		return c.ID
	}
	return fmt.Sprintf("call_%d", i)
}

func (rp Reply) finish() any {
	switch {
	case rp.NoFinish:
		return nil
	case rp.FinishReason != "":
		return rp.FinishReason
	case len(rp.ToolCalls) > 0:
		return "tool_calls"
	}
	return "stop"
}

func (rp Reply) usage(requestBytes, deltas int) obj {
	prompt, completion := rp.PromptTokens, rp.CompletionTokens
	if prompt == 0 {
		prompt = requestBytes/4 + 1
	}
	if completion == 0 {
		completion = deltas
	}
	return obj{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
}

func (s *Server) writeCompletion(w http.ResponseWriter, r *http.Request, model string, rp Reply, requestBytes int) {
	if !s.sleep(r.Context(), rp.Delay) {
		return
	}
	if rp.StallAfter > 0 {
		s.block(r.Context())
		return
	}
	if rp.errorOn() {
		msg := rp.ErrorMessage
		if msg == "" {
			msg = "The model failed while answering."
		}
		writeError(w, http.StatusOK, msg, "server_error", "")
		return
	}
	body := obj{"id": "chatcmpl-llmtest", "object": "chat.completion", "created": created, "model": model,
		"choices": []any{obj{"index": 0, "message": rp.message(rp.ReasoningField), "finish_reason": rp.finish()}}}
	if rp.Usage || rp.UsageInFinish {
		body["usage"] = rp.usage(requestBytes, len(words(rp.Content, rp.Chunk)))
	}
	b, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// deltas are the payloads that carry the reply, in order.
func (rp Reply) deltas() []obj {
	var out []obj
	content := rp.Content
	if rp.Reasoning != "" && rp.ThinkInline {
		content = "<think>" + rp.Reasoning + "</think>" + content
	} else {
		for _, piece := range words(rp.Reasoning, rp.Chunk) {
			switch rp.ReasoningField {
			case "reasoning":
				out = append(out, obj{"reasoning": piece})
			case "both":
				out = append(out, obj{"reasoning": piece, "reasoning_content": piece})
			default:
				out = append(out, obj{"reasoning_content": piece})
			}
		}
	}
	pieces := rp.Deltas
	if pieces == nil {
		pieces = words(content, rp.Chunk)
	}
	for _, piece := range pieces {
		out = append(out, obj{"content": piece})
	}

	perCall := make([][]obj, len(rp.ToolCalls))
	for i, c := range rp.ToolCalls {
		head := obj{"index": i, "id": c.id(i), "type": "function", "function": obj{"name": c.Name, "arguments": ""}}
		if rp.WholeToolCalls {
			head["function"] = obj{"name": c.Name, "arguments": c.Arguments}
			perCall[i] = []obj{head}
			continue
		}
		perCall[i] = append(perCall[i], head)
		for _, piece := range words(c.Arguments, rp.Chunk) {
			perCall[i] = append(perCall[i], obj{"index": i, "function": obj{"arguments": piece}})
		}
	}
	if rp.InterleaveToolCalls {
		for more := true; more; {
			more = false
			for i := range perCall {
				if len(perCall[i]) > 0 {
					out = append(out, obj{"tool_calls": []any{perCall[i][0]}})
					perCall[i] = perCall[i][1:]
					more = true
				}
			}
		}
	} else {
		for _, frags := range perCall {
			for _, f := range frags {
				out = append(out, obj{"tool_calls": []any{f}})
			}
		}
	}
	return out
}

// sse writes events with the reply's framing quirks.
type sse struct {
	w       http.ResponseWriter
	f       *http.ResponseController
	eol     string
	prefix  string
	names   bool
	split   bool
	scratch bytes.Buffer
}

func (e *sse) data(payload []byte) error {
	b := &e.scratch
	b.Reset()
	if e.names {
		b.WriteString("event: message" + e.eol)
	}
	if e.split && len(payload) > 1 {
		// Cut after the opening brace: the "\n" the reader joins the
		// lines with is whitespace to JSON there.
		b.WriteString(e.prefix)
		b.Write(payload[:1])
		b.WriteString(e.eol)
		payload = payload[1:]
	}
	b.WriteString(e.prefix)
	b.Write(payload)
	b.WriteString(e.eol + e.eol)
	return e.write(b.Bytes())
}

func (e *sse) event(name string, payload []byte) error {
	return e.write([]byte("event: " + name + e.eol + e.prefix + string(payload) + e.eol + e.eol))
}

func (e *sse) comment(text string) error {
	return e.write([]byte(": " + text + e.eol))
}

func (e *sse) write(b []byte) error {
	if _, err := e.w.Write(b); err != nil {
		return err
	}
	return e.f.Flush()
}

func (s *Server) writeStream(w http.ResponseWriter, r *http.Request, model string, rp Reply, requestBytes int) {
	ctx := r.Context()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	e := &sse{w: w, f: http.NewResponseController(w), eol: "\n", prefix: "data: ", names: rp.EventLines, split: rp.SplitData}
	if rp.CRLF {
		e.eol = "\r\n"
	}
	if rp.NoSpace {
		e.prefix = "data:"
	}
	if err := e.write(nil); err != nil {
		s.clientGone()
		return
	}
	if rp.Raw != "" {
		if err := e.write([]byte(rp.Raw)); err != nil {
			s.clientGone()
		}
		return
	}
	if !s.sleep(ctx, rp.Delay) {
		return
	}

	chunk := func(delta obj, finish any) obj {
		return obj{"id": "chatcmpl-llmtest", "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []any{obj{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	send := func(payload obj) bool {
		b, _ := json.Marshal(payload)
		if err := e.data(b); err != nil {
			s.clientGone()
			return false
		}
		return true
	}
	comment := func() bool {
		if err := e.comment("keepalive"); err != nil {
			s.clientGone()
			return false
		}
		return true
	}

	if !send(chunk(obj{"role": "assistant", "content": ""}, nil)) {
		return
	}
	if rp.Keepalive > 0 && !comment() {
		return
	}
	deltas := rp.deltas()
	var gap time.Duration
	if rp.TokensPerSecond > 0 {
		gap = time.Duration(float64(time.Second) / rp.TokensPerSecond)
	}
	clamp := func(n int) int { return min(n, len(deltas)) }
	for i := 0; i <= len(deltas); i++ {
		if rp.errorOn() && i == clamp(rp.ErrorAfter) {
			s.sendError(e, rp)
			return
		}
		if rp.StallAfter > 0 && i == clamp(rp.StallAfter) {
			s.block(ctx)
			return
		}
		if rp.DisconnectAfter > 0 && i == clamp(rp.DisconnectAfter) {
			// Dropping the connection from a handler: the chunked body
			// never gets its end, as when a server process dies.
			panic(http.ErrAbortHandler)
		}
		if i == len(deltas) {
			break
		}
		if i > 0 && !s.sleep(ctx, gap) {
			return
		}
		if !send(chunk(deltas[i], nil)) {
			return
		}
		if rp.Keepalive > 0 && (i+1)%rp.Keepalive == 0 && !comment() {
			return
		}
	}

	final := chunk(obj{}, rp.finish())
	if rp.UsageInFinish {
		final["usage"] = rp.usage(requestBytes, len(deltas))
	}
	if rp.Timings {
		n := len(deltas)
		final["timings"] = obj{"prompt_n": requestBytes/4 + 1, "prompt_ms": 12.5, "predicted_n": n,
			"predicted_ms": float64(n) * 20, "predicted_per_second": 50.0}
	}
	if !send(final) {
		return
	}
	if rp.Usage {
		u := obj{"id": "chatcmpl-llmtest", "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []any{}, "usage": rp.usage(requestBytes, len(deltas))}
		if !send(u) {
			return
		}
	}
	if !rp.NoDone {
		if err := e.write([]byte(e.prefix + "[DONE]" + e.eol + e.eol)); err != nil {
			s.clientGone()
		}
	}
}

func (s *Server) sendError(e *sse, rp Reply) {
	msg := rp.ErrorMessage
	if msg == "" {
		msg = "The model failed while answering."
	}
	var err error
	switch rp.ErrorShape {
	case ErrorVLLM:
		b, _ := json.Marshal(obj{"object": "error", "message": msg, "type": "BadRequestError", "param": nil, "code": 400})
		err = e.data(b)
	case ErrorString:
		b, _ := json.Marshal(obj{"error": msg})
		err = e.data(b)
	case ErrorEvent:
		b, _ := json.Marshal(obj{"message": msg})
		err = e.event("error", b)
	default:
		b, _ := json.Marshal(obj{"error": obj{"message": msg, "type": "server_error", "code": 500}})
		err = e.data(b)
	}
	if err == nil && !rp.NoDone {
		err = e.write([]byte(e.prefix + "[DONE]" + e.eol + e.eol))
	}
	if err != nil {
		s.clientGone()
	}
}
