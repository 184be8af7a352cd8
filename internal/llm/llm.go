// Package llm talks to OpenAI-compatible endpoints: listing models,
// streaming chat completions, and asking for one in a piece. It is tolerant
// of the shapes real servers send (OpenAI, Ollama, llama.cpp, vLLM, LM
// Studio, OpenRouter) and turns their failures into plain sentences (*Error).
// It knows nothing of our database: callers pass an Endpoint.
//
// It refuses to guess. A context length or a capability the server did not
// state stays unknown (0, nil); an id containing "embed" is just an id. It
// sends what it is given: whether a model may see images, which effort a
// chat has, and what to do with inline <think> (ThinkSplitter,
// StripReasoning) are the caller's decisions. It does not retry.
package llm

import "time"

// Endpoint is where and how to reach one OpenAI-compatible server.
type Endpoint struct {
	BaseURL string            // e.g. http://localhost:11434/v1 (no trailing /models)
	APIKey  string            // plaintext; sent as a Bearer token when set
	Headers map[string]string // extra request headers (OpenRouter's HTTP-Referer, …)
	Timeout time.Duration     // for non-streaming calls (models, complete); 0 means the client's default
}

// Model is one entry of an endpoint's /models list, as far as the server
// said. Zero values mean the server did not say: ContextLength 0 is
// "unknown", never "small".
type Model struct {
	ID            string // the upstream's model name
	Name          string // a display name, when the server gave one distinct from ID (OpenRouter)
	OwnedBy       string
	ContextLength int // tokens; 0 = unknown
	// Pricing per token in USD as the server stated it (OpenRouter); empty
	// when not stated.
	PromptPrice     string
	CompletionPrice string
	Description     string
	// Capabilities the server advertised, when it did (e.g. OpenRouter's
	// input modalities "image", supported parameters "tools",
	// "reasoning"). Nil when nothing was stated.
	Vision    *bool
	Tools     *bool
	Reasoning *bool
	Embedding *bool
}
