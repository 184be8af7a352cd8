package llm

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"lembas/internal/llm/llmtest"
)

// sent runs req through Stream against a fake server and returns the body
// the server received.
func sent(t *testing.T, req ChatRequest) map[string]any {
	t.Helper()
	srv := llmtest.NewServer(t)
	srv.Default(llmtest.Reply{Content: "ok"})
	c := New(Options{})
	s, err := c.Stream(context.Background(), Endpoint{BaseURL: srv.URL}, req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for {
		if _, err := s.Next(); err != nil {
			break
		}
	}
	return srv.LastRequest().Body
}

func jsonOf(t *testing.T, v string) any {
	t.Helper()
	var out any
	if err := json.Unmarshal([]byte(v), &out); err != nil {
		t.Fatalf("%s: %v", v, err)
	}
	return out
}

func TestRequestEffort(t *testing.T) {
	hi := []Message{{Role: RoleUser, Content: "hi"}}
	tests := []struct {
		name       string
		effort     string
		wantEffort any    // nil: absent
		wantKwargs string // "": absent
	}{
		// Unset sends neither field: a server strict about unknown
		// fields sees the request it always did.
		{"unset", "", nil, ""},
		{"level", "high", "high", `{"reasoning_effort":"high"}`},
		{"level is lower-cased", " Low ", "low", `{"reasoning_effort":"low"}`},
		{"off", EffortOff, "none", `{"enable_thinking":false}`},
		{"none is off", "none", "none", `{"enable_thinking":false}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := sent(t, ChatRequest{Model: "m", Messages: hi, Effort: tt.effort})
			effort, hasEffort := body["reasoning_effort"]
			kwargs, hasKwargs := body["chat_template_kwargs"]
			if tt.wantEffort == nil {
				if hasEffort || hasKwargs {
					t.Fatalf("unset effort sent reasoning_effort=%v chat_template_kwargs=%v", effort, kwargs)
				}
				return
			}
			if effort != tt.wantEffort {
				t.Fatalf("reasoning_effort = %v, want %v", effort, tt.wantEffort)
			}
			if !reflect.DeepEqual(kwargs, jsonOf(t, tt.wantKwargs)) {
				t.Fatalf("chat_template_kwargs = %v, want %s", kwargs, tt.wantKwargs)
			}
		})
	}
}

func TestRequestBody(t *testing.T) {
	temp, topP, maxTok := 0.0, 0.9, 256
	tests := []struct {
		name string
		req  ChatRequest
		want string // the whole body
	}{
		{
			name: "plain text turns stay strings; unset numbers are absent",
			req: ChatRequest{Model: "m", Messages: []Message{
				{Role: RoleSystem, Content: "Be brief."},
				{Role: RoleUser, Content: "hi"},
			}},
			want: `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[
				{"role":"system","content":"Be brief."},{"role":"user","content":"hi"}]}`,
		},
		{
			name: "an image makes parts, text first",
			req: ChatRequest{Model: "m", Messages: []Message{
				{Role: RoleUser, Content: "What is this?", Images: []string{"data:image/png;base64,AAAA", "data:image/jpeg;base64,BBBB"}},
				{Role: RoleAssistant, Content: "A cat."},
				{Role: RoleUser, Content: "And now?"},
			}},
			want: `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[
				{"role":"user","content":[
					{"type":"text","text":"What is this?"},
					{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}},
					{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,BBBB"}}]},
				{"role":"assistant","content":"A cat."},
				{"role":"user","content":"And now?"}]}`,
		},
		{
			name: "an image alone has no empty text part",
			req:  ChatRequest{Model: "m", Messages: []Message{{Role: RoleUser, Images: []string{"data:image/png;base64,AAAA"}}}},
			want: `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[
				{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]}]}`,
		},
		{
			name: "set numbers are sent, zero included",
			req:  ChatRequest{Model: "m", Messages: []Message{{Role: RoleUser, Content: "x"}}, Temperature: &temp, TopP: &topP, MaxTokens: &maxTok},
			want: `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}],
				"temperature":0,"top_p":0.9,"max_tokens":256}`,
		},
		{
			name: "tools, a tool round sent back, and a forced choice",
			req: ChatRequest{Model: "m",
				Messages: []Message{
					{Role: RoleUser, Content: "weather?"},
					{Role: RoleAssistant, ToolCalls: []ToolCall{
						{ID: "call_a", Name: "weather", Arguments: `{"city":"Bree"}`},
						{ID: "call_b", Name: "weather", Arguments: ""},
					}},
					{Role: RoleTool, ToolCallID: "call_a", Content: "rain"},
					{Role: RoleTool, ToolCallID: "call_b", Content: "sun"},
				},
				Tools: []Tool{
					{Name: "weather", Description: "Weather for a city.", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)},
					{Name: "now"},
				},
				ToolChoice: "weather",
			},
			want: `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[
				{"role":"user","content":"weather?"},
				{"role":"assistant","content":"","tool_calls":[
					{"id":"call_a","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Bree\"}"}},
					{"id":"call_b","type":"function","function":{"name":"weather","arguments":"{}"}}]},
				{"role":"tool","content":"rain","tool_call_id":"call_a"},
				{"role":"tool","content":"sun","tool_call_id":"call_b"}],
				"tools":[
					{"type":"function","function":{"name":"weather","description":"Weather for a city.","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}},
					{"type":"function","function":{"name":"now","parameters":{"type":"object","properties":{}}}}],
				"tool_choice":{"type":"function","function":{"name":"weather"}}}`,
		},
		{
			name: "tool_choice without tools is not sent",
			req:  ChatRequest{Model: "m", Messages: []Message{{Role: RoleUser, Content: "x"}}, ToolChoice: "auto"},
			want: `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sent(t, tt.req)
			if want := jsonOf(t, tt.want); !reflect.DeepEqual(any(got), want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				t.Fatalf("body\n got  %s\n want %s", g, w)
			}
		})
	}
}

// The non-streaming body says stream false and asks for no usage chunk.
func TestCompleteRequestBody(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Default(llmtest.Reply{Content: "ok"})
	_, err := New(Options{}).Complete(context.Background(), Endpoint{BaseURL: srv.URL, APIKey: "k"},
		ChatRequest{Model: "m", Messages: []Message{{Role: RoleUser, Content: "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	r := srv.LastRequest()
	want := jsonOf(t, `{"model":"m","stream":false,"messages":[{"role":"user","content":"x"}]}`)
	if !reflect.DeepEqual(any(r.Body), want) {
		t.Fatalf("body %v", r.Body)
	}
	if r.Header.Get("Content-Type") != "application/json" || r.Header.Get("Authorization") != "Bearer k" {
		t.Fatalf("headers %v", r.Header)
	}
}

func TestRequestWithoutModel(t *testing.T) {
	_, err := New(Options{}).Stream(context.Background(), Endpoint{BaseURL: "http://127.0.0.1:1/v1"}, ChatRequest{})
	checkSentence(t, err, KindInvalid, "No model was chosen")
}
