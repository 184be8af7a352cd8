package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Completion is a whole chat completion: what Complete returns. Content is
// verbatim, so a model that thinks inline leaves its <think> block in it;
// put it through StripReasoning before using it as a title (spec:
// "Auto-titling is a request like any other").
type Completion struct {
	Content      string
	Reasoning    string // reasoning_content or reasoning, when the server separated it
	ToolCalls    []ToolCall
	FinishReason string
	Usage        *Usage // nil when the server sent none
}

// Complete asks for a chat completion in one piece (stream false), for
// titles and summaries. It is bounded by ep.Timeout or the client's
// CompleteTimeout. A server that streams anyway is read as a stream.
func (c *Client) Complete(ctx context.Context, ep Endpoint, req ChatRequest) (Completion, error) {
	u, t, err := resolve(ep, "/chat/completions")
	if err != nil {
		return Completion{}, err
	}
	body, err := req.body(false)
	if err != nil {
		return Completion{}, err
	}
	limit := timeoutFor(ep, c.opts.CompleteTimeout)
	rctx, cancel := context.WithTimeoutCause(ctx, limit, errTooSlow)
	defer cancel()
	hreq, err := c.newRequest(rctx, ep, http.MethodPost, u, body, "application/json")
	if err != nil {
		return Completion{}, err
	}
	resp, err := c.hc.Do(hreq)
	if err != nil {
		return Completion{}, transportError(ctx, rctx, t, limit, false, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return Completion{}, statusError(t, resp)
	}
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(strings.ToLower(ct), "text/event-stream") {
		s := &Stream{t: t, parent: ctx, ctx: rctx, cancel: func(error) { cancel() }, body: resp.Body, idleFor: limit, total: true,
			events: newEventReader(resp.Body, c.opts.MaxLineBytes)}
		return collect(s)
	}
	raw, tooBig, err := readAll(resp.Body)
	if err != nil {
		return Completion{}, transportError(ctx, rctx, t, limit, false, err)
	}
	return decodeCompletion(t, raw, tooBig)
}

// collect reads a whole stream into a Completion.
func collect(s *Stream) (Completion, error) {
	defer s.Close()
	var comp Completion
	var content, reasoning strings.Builder
	var calls ToolCallAssembler
	for {
		c, err := s.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Completion{}, err
		}
		content.WriteString(c.Content)
		reasoning.WriteString(c.Reasoning)
		for _, d := range c.ToolCalls {
			if err := calls.Add(d); err != nil {
				return Completion{}, err
			}
		}
		if c.FinishReason != "" {
			comp.FinishReason = c.FinishReason
		}
		if c.Usage != nil {
			comp.Usage = c.Usage
		}
	}
	comp.Content, comp.Reasoning, comp.ToolCalls = content.String(), reasoning.String(), calls.Calls()
	return comp, nil
}

// decodeCompletion reads a non-streamed answer.
func decodeCompletion(t target, raw []byte, tooBig bool) (Completion, error) {
	if tooBig {
		return Completion{}, &Error{Kind: KindBadResponse, URL: t.url,
			Message: fmt.Sprintf("%s sent more than %d MiB for one reply; stopped reading.", t.url, bodyLimit>>20)}
	}
	data := trimBOM(raw)
	c, said, status, err := decodeChunk(data)
	if said != "" {
		return Completion{}, upstreamError(t, said, status)
	}
	if err != nil {
		return Completion{}, badResponse(t, "a chat completion", raw, err)
	}
	if !hasChoices(data) {
		return Completion{}, badResponse(t, "a chat completion", raw, fmt.Errorf("llm: completion without choices"))
	}
	comp := Completion{Content: c.Content, Reasoning: c.Reasoning, FinishReason: c.FinishReason, Usage: c.Usage}
	var calls ToolCallAssembler
	for i, d := range c.ToolCalls {
		if d.Index < 0 {
			d.Index = i // a message's calls carry no index; their order is it
		}
		if err := calls.Add(d); err != nil {
			return Completion{}, err
		}
	}
	comp.ToolCalls = calls.Calls()
	return comp, nil
}

func hasChoices(data []byte) bool {
	var w struct {
		Choices []json.RawMessage `json:"choices"`
	}
	_ = json.Unmarshal(data, &w)
	return len(w.Choices) > 0
}

// chunks replays a completion as a stream would have delivered it.
func (comp Completion) chunks() []Chunk {
	c := Chunk{Content: comp.Content, Reasoning: comp.Reasoning, FinishReason: comp.FinishReason, Usage: comp.Usage}
	if c.FinishReason == "" {
		c.FinishReason = "stop"
	}
	for i, tc := range comp.ToolCalls {
		c.ToolCalls = append(c.ToolCalls, ToolCallDelta{Index: i, ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
	}
	return []Chunk{c}
}
