package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// ListModels asks ep for its models (GET {BaseURL}/models), bounded by
// ep.Timeout or the client's ListTimeout. It reads every shape real
// servers send and states only what the server stated: a context length
// it did not give is 0, a capability it did not mention is nil.
func (c *Client) ListModels(ctx context.Context, ep Endpoint) ([]Model, error) {
	u, t, err := resolve(ep, "/models")
	if err != nil {
		return nil, err
	}
	limit := timeoutFor(ep, c.opts.ListTimeout)
	rctx, cancel := context.WithTimeoutCause(ctx, limit, errTooSlow)
	defer cancel()
	req, err := c.newRequest(rctx, ep, http.MethodGet, u, nil, "application/json")
	if err != nil {
		return nil, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, transportError(ctx, rctx, t, limit, false, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, statusError(t, resp)
	}
	raw, tooBig, err := readAll(resp.Body)
	if err != nil {
		return nil, transportError(ctx, rctx, t, limit, false, err)
	}
	if tooBig {
		return nil, &Error{Kind: KindBadResponse, URL: t.url,
			Message: fmt.Sprintf("%s sent more than %d MiB for its model list; stopped reading.", t.url, bodyLimit>>20)}
	}
	models, said, err := parseModels(raw)
	if said != "" {
		return nil, upstreamError(t, said, 0)
	}
	if err != nil {
		return nil, badResponse(t, "a model list", raw, err)
	}
	return models, nil
}

var errNotModelList = errors.New("llm: not a model list")

// wireModel is the union of the fields the servers put on a model. Which
// server sends which is noted beside it.
type wireModel struct {
	ID          flexString `json:"id"`
	Model       flexString `json:"model"` // llama.cpp's models[] (Ollama-style)
	Name        flexString `json:"name"`  // OpenRouter's display name; llama.cpp's models[]
	OwnedBy     flexString `json:"owned_by"`
	Description flexString `json:"description"` // OpenRouter, llama-swap
	// LM Studio's native list: "llm", "vlm", "embeddings". llama.cpp's
	// models[] says "model", which states nothing.
	Type flexString `json:"type"`
	// Ollama-style capability names: llama.cpp's models[] ("completion",
	// "multimodal"), and servers that copy Ollama ("vision", "tools",
	// "thinking", "embedding").
	Capabilities flexStrings `json:"capabilities"`

	// The context the server runs with, under each server's name for it.
	ContextLength    flexInt `json:"context_length"`     // OpenRouter, llama-swap, Together
	ContextWindow    flexInt `json:"context_window"`     // Groq
	MaxModelLen      flexInt `json:"max_model_len"`      // vLLM
	MaxContextLength flexInt `json:"max_context_length"` // LM Studio's native list
	Meta             *struct {
		// n_ctx is what llama.cpp serves (newer builds, llama-swap);
		// n_ctx_train is what the model was trained with, often far
		// more than is served, and is deliberately not read.
		NCtx flexInt `json:"n_ctx"`
	} `json:"meta"`
	TopProvider *struct {
		ContextLength flexInt `json:"context_length"`
	} `json:"top_provider"` // OpenRouter

	Pricing *struct {
		Prompt     flexString `json:"prompt"`
		Completion flexString `json:"completion"`
	} `json:"pricing"` // OpenRouter: USD per token, as strings
	Architecture *struct {
		Modality         flexString  `json:"modality"` // "text+image->text"
		InputModalities  flexStrings `json:"input_modalities"`
		OutputModalities flexStrings `json:"output_modalities"`
	} `json:"architecture"` // OpenRouter
	SupportedParameters *flexStrings `json:"supported_parameters"` // OpenRouter
}

// parseModels reads a model list. said is set when the answer was an
// error object rather than a list.
func parseModels(raw []byte) (models []Model, said string, err error) {
	raw = bytes.TrimSpace(trimBOM(raw))
	if len(raw) == 0 {
		return nil, "", errNotModelList
	}
	var data, extra []json.RawMessage
	switch raw[0] {
	case '[': // a bare array, of models or of names
		if err := json.Unmarshal(raw, &data); err != nil {
			return nil, "", fmt.Errorf("llm: model list: %w", err)
		}
	case '{':
		var top struct {
			Data   json.RawMessage `json:"data"`
			Models json.RawMessage `json:"models"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(raw, &top); err != nil {
			return nil, "", fmt.Errorf("llm: model list: %w", err)
		}
		if len(top.Data) == 0 && len(top.Models) == 0 {
			if s := messageIn(top.Error, 0); s != "" {
				return nil, excerpt(s), nil
			}
			return nil, "", errNotModelList
		}
		// A field of the wrong type is taken as empty rather than fatal.
		_ = json.Unmarshal(top.Data, &data)
		_ = json.Unmarshal(top.Models, &extra)
	default:
		return nil, "", errNotModelList
	}

	// Newer llama.cpp sends both data[] (OpenAI) and models[] (Ollama);
	// data[] is the list, models[] adds what it states about each.
	list := readEntries(data)
	more := readEntries(extra)
	if len(list) == 0 {
		list, more = more, nil
	}
	seen := make(map[string]int, len(list))
	for _, m := range list {
		if i, dup := seen[m.ID]; dup {
			models[i] = merge(models[i], m)
			continue
		}
		seen[m.ID] = len(models)
		models = append(models, m)
	}
	for _, m := range more {
		if i, ok := seen[m.ID]; ok {
			models[i] = merge(models[i], m)
		}
	}
	if models == nil {
		models = []Model{}
	}
	return models, "", nil
}

func readEntries(raw []json.RawMessage) []Model {
	var out []Model
	for _, r := range raw {
		var w wireModel
		if len(r) > 0 && r[0] == '"' {
			_ = w.ID.UnmarshalJSON(r)
		} else if err := json.Unmarshal(r, &w); err != nil {
			var typeErr *json.UnmarshalTypeError
			if !errors.As(err, &typeErr) {
				continue
			}
			// A field of an unexpected type: keep what did decode.
		}
		if m, ok := w.model(); ok {
			out = append(out, m)
		}
	}
	return out
}

func (w wireModel) model() (Model, bool) {
	id := strings.TrimSpace(string(w.ID))
	if id == "" {
		id = strings.TrimSpace(string(w.Model))
	}
	if id == "" {
		id = strings.TrimSpace(string(w.Name))
	}
	if id == "" {
		return Model{}, false
	}
	m := Model{
		ID:          id,
		OwnedBy:     string(w.OwnedBy),
		Description: strings.TrimSpace(string(w.Description)),
	}
	if name := strings.TrimSpace(string(w.Name)); name != id {
		m.Name = name
	}

	for _, n := range []flexInt{metaNCtx(w), w.MaxModelLen, w.ContextLength, w.ContextWindow, w.MaxContextLength, topContext(w)} {
		if n > 0 && n < 1<<40 {
			m.ContextLength = int(n)
			break
		}
	}
	if w.Pricing != nil {
		m.PromptPrice = strings.TrimSpace(string(w.Pricing.Prompt))
		m.CompletionPrice = strings.TrimSpace(string(w.Pricing.Completion))
	}

	// OpenRouter's lists are complete, so what they leave out is stated
	// as absent. Capability words elsewhere are only ever additions:
	// llama.cpp always says "completion" and nothing else, which says
	// nothing about vision.
	if a := w.Architecture; a != nil {
		switch {
		case a.InputModalities != nil:
			m.Vision = ptr(a.InputModalities.has("image"))
		case a.Modality != "":
			in, _, _ := strings.Cut(string(a.Modality), "->")
			m.Vision = ptr(strings.Contains(in, "image"))
		}
		if a.OutputModalities != nil {
			m.Embedding = ptr(a.OutputModalities.has("embeddings", "embedding"))
		}
	}
	if p := w.SupportedParameters; p != nil {
		m.Tools = ptr(p.has("tools"))
		m.Reasoning = ptr(p.has("reasoning", "include_reasoning"))
	}
	caps := w.Capabilities
	if caps.has("vision", "multimodal", "image") {
		m.Vision = ptr(true)
	}
	if caps.has("tools") {
		m.Tools = ptr(true)
	}
	if caps.has("thinking", "reasoning") {
		m.Reasoning = ptr(true)
	}
	if caps.has("embedding", "embeddings") {
		m.Embedding = ptr(true)
	}
	switch strings.ToLower(string(w.Type)) {
	case "vlm":
		m.Vision = ptr(true)
	case "embedding", "embeddings":
		m.Embedding = ptr(true)
	}
	return m, true
}

func metaNCtx(w wireModel) flexInt {
	if w.Meta == nil {
		return 0
	}
	return w.Meta.NCtx
}

func topContext(w wireModel) flexInt {
	if w.TopProvider == nil {
		return 0
	}
	return w.TopProvider.ContextLength
}

// merge fills what a left unsaid from b.
func merge(a, b Model) Model {
	if a.OwnedBy == "" {
		a.OwnedBy = b.OwnedBy
	}
	if a.Name == "" {
		a.Name = b.Name
	}
	if a.Description == "" {
		a.Description = b.Description
	}
	if a.ContextLength == 0 {
		a.ContextLength = b.ContextLength
	}
	if a.PromptPrice == "" && a.CompletionPrice == "" {
		a.PromptPrice, a.CompletionPrice = b.PromptPrice, b.CompletionPrice
	}
	a.Vision = mergeBool(a.Vision, b.Vision)
	a.Tools = mergeBool(a.Tools, b.Tools)
	a.Reasoning = mergeBool(a.Reasoning, b.Reasoning)
	a.Embedding = mergeBool(a.Embedding, b.Embedding)
	return a
}

func mergeBool(a, b *bool) *bool {
	if a == nil || (b != nil && *b) {
		return b
	}
	return a
}

func ptr[T any](v T) *T { return &v }
