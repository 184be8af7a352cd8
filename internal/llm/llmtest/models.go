package llmtest

import (
	"encoding/json"
	"net/http"
)

// Shape is the form of a /models answer, one per real server.
type Shape int

const (
	// ShapeOpenAI: {"object":"list","data":[{"id","object","created",
	// "owned_by"}]} and nothing about context or capabilities.
	ShapeOpenAI Shape = iota
	// ShapeOllama: Ollama's /v1/models, the OpenAI shape with owned_by
	// "library"; context and capabilities only on its native API.
	ShapeOllama
	// ShapeLlamaCpp: a current llama.cpp server. data[] carries meta
	// with n_ctx (what it serves) beside n_ctx_train (what the model was
	// trained for, usually far more); a second, Ollama-style models[]
	// array says "completion", and "multimodal" when a projector is
	// loaded.
	ShapeLlamaCpp
	// ShapeLlamaCppLegacy: an older llama.cpp, whose meta has only
	// n_ctx_train. The served context is not stated at all.
	ShapeLlamaCppLegacy
	// ShapeVLLM: data[] with max_model_len (the served context), root,
	// parent and a permission list.
	ShapeVLLM
	// ShapeOpenRouter: data[] with name, description, context_length,
	// pricing (strings, USD per token), architecture.input_modalities and
	// output_modalities, top_provider and supported_parameters; no
	// object or owned_by.
	ShapeOpenRouter
	// ShapeLMStudio: LM Studio's /v1/models, ids only, owned_by
	// "organization_owner"; context unknown.
	ShapeLMStudio
	// ShapeBareArray: a JSON array of model objects with no envelope, as
	// some small servers and proxies answer.
	ShapeBareArray
)

// ModelSpec is one model the fake lists. Each Shape renders what that
// server would state and leaves out what it would not: ContextLength
// appears only where the server states a served context (vLLM,
// OpenRouter, current llama.cpp), capabilities only where it states them.
type ModelSpec struct {
	ID            string
	Name          string // OpenRouter's display name
	Description   string
	ContextLength int // the served context
	TrainContext  int // llama.cpp's n_ctx_train
	// OpenRouter states all four; current llama.cpp states Vision (as
	// "multimodal").
	Vision, Tools, Reasoning, Embedding bool
	PromptPrice, CompletionPrice        string // OpenRouter
}

type modelsConfig struct {
	shape  Shape
	specs  []ModelSpec
	raw    bool
	status int
	ctype  string
	body   string
}

// SetModels makes GET /v1/models list specs in shape.
func (s *Server) SetModels(shape Shape, specs ...ModelSpec) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = modelsConfig{shape: shape, specs: append([]ModelSpec(nil), specs...)}
}

// SetModelsBody makes GET /v1/models answer status with contentType and
// body verbatim: an error page, a body that is not JSON, a 200 carrying an
// error object.
func (s *Server) SetModelsBody(status int, contentType, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = modelsConfig{raw: true, status: status, ctype: contentType, body: body}
}

func (s *Server) serveModels(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	cfg := s.models
	s.mu.Unlock()
	if cfg.raw {
		if cfg.ctype != "" {
			w.Header().Set("Content-Type", cfg.ctype)
		}
		w.WriteHeader(cfg.status)
		_, _ = w.Write([]byte(cfg.body))
		return
	}
	body, _ := json.Marshal(renderModels(cfg.shape, cfg.specs))
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

const created = 1735689600

type obj = map[string]any

func renderModels(shape Shape, specs []ModelSpec) any {
	data := make([]any, 0, len(specs))
	switch shape {
	case ShapeOllama:
		for _, m := range specs {
			data = append(data, obj{"id": m.ID, "object": "model", "created": created, "owned_by": "library"})
		}
		return obj{"object": "list", "data": data}
	case ShapeLlamaCpp, ShapeLlamaCppLegacy:
		var models []any
		for _, m := range specs {
			meta := obj{"vocab_type": 2, "n_vocab": 151936, "n_ctx_train": m.TrainContext,
				"n_embd": 2560, "n_params": 4022468096, "size": 2497280256}
			if shape == ShapeLlamaCpp && m.ContextLength > 0 {
				meta["n_ctx"] = m.ContextLength
			}
			data = append(data, obj{"id": m.ID, "object": "model", "created": created, "owned_by": "llamacpp", "meta": meta})
			caps := []string{"completion"}
			if m.Vision {
				caps = append(caps, "multimodal")
			}
			models = append(models, obj{"name": m.ID, "model": m.ID, "modified_at": "", "size": "", "digest": "",
				"type": "model", "description": "", "tags": []string{""}, "capabilities": caps, "parameters": "",
				"details": obj{"parent_model": "", "format": "gguf", "family": "", "families": []string{""},
					"parameter_size": "", "quantization_level": ""}})
		}
		if shape == ShapeLlamaCppLegacy {
			return obj{"object": "list", "data": data}
		}
		return obj{"models": models, "object": "list", "data": data}
	case ShapeVLLM:
		for _, m := range specs {
			e := obj{"id": m.ID, "object": "model", "created": created, "owned_by": "vllm", "root": m.ID, "parent": nil,
				"permission": []any{obj{"id": "modelperm-0", "object": "model_permission", "created": created,
					"allow_create_engine": false, "allow_sampling": true, "allow_logprobs": true,
					"allow_search_indices": false, "allow_view": true, "allow_fine_tuning": false,
					"organization": "*", "group": nil, "is_blocking": false}}}
			if m.ContextLength > 0 {
				e["max_model_len"] = m.ContextLength
			}
			data = append(data, e)
		}
		return obj{"object": "list", "data": data}
	case ShapeOpenRouter:
		for _, m := range specs {
			in, out, modality := []string{"text"}, []string{"text"}, "text->text"
			if m.Vision {
				in, modality = []string{"text", "image"}, "text+image->text"
			}
			if m.Embedding {
				out, modality = []string{"embeddings"}, "text->embeddings"
			}
			params := []string{"max_tokens", "temperature", "top_p", "stop"}
			if m.Tools {
				params = append(params, "tools", "tool_choice")
			}
			if m.Reasoning {
				params = append(params, "reasoning", "include_reasoning")
			}
			name := m.Name
			if name == "" {
				name = m.ID
			}
			data = append(data, obj{"id": m.ID, "canonical_slug": m.ID, "name": name, "created": created,
				"description": m.Description, "context_length": m.ContextLength,
				"architecture": obj{"modality": modality, "input_modalities": in, "output_modalities": out,
					"tokenizer": "Other", "instruct_type": nil},
				"pricing":            obj{"prompt": m.PromptPrice, "completion": m.CompletionPrice, "request": "0", "image": "0"},
				"top_provider":       obj{"context_length": m.ContextLength, "max_completion_tokens": nil, "is_moderated": false},
				"per_request_limits": nil, "supported_parameters": params})
		}
		return obj{"data": data}
	case ShapeLMStudio:
		for _, m := range specs {
			data = append(data, obj{"id": m.ID, "object": "model", "owned_by": "organization_owner"})
		}
		return obj{"data": data, "object": "list"}
	case ShapeBareArray:
		for _, m := range specs {
			data = append(data, obj{"id": m.ID, "object": "model", "owned_by": "local"})
		}
		return data
	default: // ShapeOpenAI
		for _, m := range specs {
			data = append(data, obj{"id": m.ID, "object": "model", "created": created, "owned_by": "openai"})
		}
		return obj{"object": "list", "data": data}
	}
}
