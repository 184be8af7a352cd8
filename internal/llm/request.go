package llm

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Roles of a chat message.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// EffortOff is the reasoning-effort sentinel for "do not think". It is a
// value of its own, never the empty string, because empty means "not set"
// (spec: "Effort: off" has to be a sentinel).
const EffortOff = "off"

// ChatRequest is one chat completion to ask for. Optional numbers are
// pointers so that unset is absent from the request, not zero.
type ChatRequest struct {
	Model       string
	Messages    []Message
	Temperature *float64
	TopP        *float64
	MaxTokens   *int // sent as max_tokens
	Tools       []Tool
	// ToolChoice is "auto", "none", "required", or the name of one tool
	// the model must call. Empty sends nothing; so does having no Tools.
	ToolChoice string
	// Effort is the reasoning effort: "" sends nothing at all, EffortOff
	// asks the model not to think, anything else ("low", "medium",
	// "high", …) is sent as written. See effortFields for what goes out.
	Effort string
}

// Message is one turn. There is deliberately no field for reasoning: what
// a model thought is shown and stored but never sent back (spec:
// "Reasoning arrives two ways").
type Message struct {
	Role    string
	Content string
	// Images are image URLs, normally data: URIs (a local endpoint cannot
	// reach us and a hosted one has no credentials). With any image the
	// content goes out as parts; without, as a plain string. Whether a
	// model may see images is the caller's decision (spec: "Images only go
	// to models marked vision"): most endpoints reject parts they do not
	// support, so drop Images for a model not marked vision.
	Images []string
	// ToolCalls are an assistant turn's calls, sent back with the results.
	ToolCalls []ToolCall
	// ToolCallID ties a tool turn to the call it answers.
	ToolCallID string
}

// Tool is a function the model may call.
type Tool struct {
	Name        string
	Description string
	// Parameters is a JSON Schema object; nil means no parameters.
	Parameters json.RawMessage
}

// ToolCall is one complete call a model made.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string // JSON text as the model wrote it; "{}" when it wrote none
}

// The request body. Field order is the order a person reading a captured
// request expects.
type wireRequest struct {
	Model              string             `json:"model"`
	Messages           []wireMessage      `json:"messages"`
	Stream             bool               `json:"stream"`
	StreamOptions      *wireStreamOptions `json:"stream_options,omitempty"`
	Temperature        *float64           `json:"temperature,omitempty"`
	TopP               *float64           `json:"top_p,omitempty"`
	MaxTokens          *int               `json:"max_tokens,omitempty"`
	Tools              []wireTool         `json:"tools,omitempty"`
	ToolChoice         any                `json:"tool_choice,omitempty"`
	ReasoningEffort    string             `json:"reasoning_effort,omitempty"`
	ChatTemplateKwargs *wireTemplateArgs  `json:"chat_template_kwargs,omitempty"`
}

type wireStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type wireTemplateArgs struct {
	ReasoningEffort string `json:"reasoning_effort,omitempty"`
	EnableThinking  *bool  `json:"enable_thinking,omitempty"`
}

type wireMessage struct {
	Role       string         `json:"role"`
	Content    any            `json:"content"` // string, or []wirePart with images
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type wirePart struct {
	Type     string        `json:"type"`
	Text     string        `json:"text,omitempty"`
	ImageURL *wireImageURL `json:"image_url,omitempty"`
}

type wireImageURL struct {
	URL string `json:"url"`
}

type wireTool struct {
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

type wireToolCall struct {
	ID       string           `json:"id"`
	Type     string           `json:"type"`
	Function wireCallFunction `json:"function"`
}

type wireCallFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// emptySchema stands in for a tool without parameters: several servers
// reject a function with none.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// body encodes req for the wire.
func (req ChatRequest) body(stream bool) ([]byte, error) {
	if strings.TrimSpace(req.Model) == "" {
		return nil, &Error{Kind: KindInvalid, Message: "No model was chosen for this request.",
			Err: fmt.Errorf("llm: chat request without a model")}
	}
	w := wireRequest{
		Model:       req.Model,
		Messages:    make([]wireMessage, 0, len(req.Messages)),
		Stream:      stream,
		Temperature: req.Temperature,
		TopP:        req.TopP,
		MaxTokens:   req.MaxTokens,
	}
	if stream {
		// Asks for a final usage chunk. Servers that do not know the
		// option ignore it; those that do (OpenAI, vLLM, llama.cpp)
		// send nothing without it.
		w.StreamOptions = &wireStreamOptions{IncludeUsage: true}
	}
	for _, m := range req.Messages {
		w.Messages = append(w.Messages, m.wire())
	}
	if len(req.Tools) > 0 {
		for _, t := range req.Tools {
			params := t.Parameters
			if len(strings.TrimSpace(string(params))) == 0 || string(params) == "null" {
				params = emptySchema
			}
			w.Tools = append(w.Tools, wireTool{Type: "function",
				Function: wireFunction{Name: t.Name, Description: t.Description, Parameters: params}})
		}
		switch c := strings.TrimSpace(req.ToolChoice); c {
		case "":
		case "auto", "none", "required":
			w.ToolChoice = c
		default:
			w.ToolChoice = map[string]any{"type": "function", "function": map[string]string{"name": c}}
		}
	}
	w.ReasoningEffort, w.ChatTemplateKwargs = effortFields(req.Effort)
	b, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("llm: encode request: %w", err)
	}
	return b, nil
}

// effortFields maps the chat's effort onto the two fields servers read.
//
// There is no one field that works everywhere (spec: "Reasoning effort
// goes out twice, and only when it is set"): OpenAI, vLLM, Ollama and
// OpenRouter read top-level reasoning_effort; llama.cpp drops it without a
// word and what reaches the template is chat_template_kwargs. So a level
// goes out in both. Unset sends neither, so a server strict about unknown
// fields sees the request it always did.
//
// Off is not a level, and each kind of server has its own switch:
//
//   - reasoning_effort "none" is the OpenAI API's own way to say "no
//     reasoning" (GPT-5.1 and later), and the one Ollama's
//     /v1/chat/completions honours (it maps "none" to think=false and
//     ignores chat_template_kwargs entirely); vLLM and OpenRouter accept
//     it, and recent llama.cpp reads it too.
//   - chat_template_kwargs {"enable_thinking": false} is the switch the
//     Qwen3-style templates (Qwen, GLM, and others) read, on llama.cpp and
//     vLLM alike; it is what turns thinking off on a llama.cpp that
//     predates reading "none".
//
// We do not put "none" into the template's reasoning_effort: a gpt-oss
// template knows only low/medium/high, and "none" there is not a switch
// but a strange word in its system prompt. A server that knows effort
// levels but not "none" (older OpenAI reasoning models, older vLLM) will
// refuse the request with a 400 that names the field; we prefer that
// visible refusal to dropping the field and letting "off" silently
// think at the default level.
func effortFields(effort string) (string, *wireTemplateArgs) {
	level := strings.ToLower(strings.TrimSpace(effort))
	switch level {
	case "":
		return "", nil
	case EffortOff, "none":
		no := false
		return "none", &wireTemplateArgs{EnableThinking: &no}
	default:
		return level, &wireTemplateArgs{ReasoningEffort: level}
	}
}

// wire encodes a message. Content is always a string, empty beside tool
// calls, except that images turn it into parts.
func (m Message) wire() wireMessage {
	w := wireMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
	if len(m.Images) > 0 {
		parts := make([]wirePart, 0, len(m.Images)+1)
		if m.Content != "" {
			parts = append(parts, wirePart{Type: "text", Text: m.Content})
		}
		for _, u := range m.Images {
			parts = append(parts, wirePart{Type: "image_url", ImageURL: &wireImageURL{URL: u}})
		}
		w.Content = parts
	}
	for _, c := range m.ToolCalls {
		args := c.Arguments
		if strings.TrimSpace(args) == "" {
			// llama.cpp parses arguments to render its template, and an
			// empty string is not JSON.
			args = "{}"
		}
		w.ToolCalls = append(w.ToolCalls, wireToolCall{ID: c.ID, Type: "function",
			Function: wireCallFunction{Name: c.Name, Arguments: args}})
	}
	return w
}
