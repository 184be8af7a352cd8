package llm

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"lembas/internal/llm/llmtest"
)

func TestComplete(t *testing.T) {
	tests := []struct {
		name  string
		reply llmtest.Reply
		want  Completion
	}{
		{"content and usage", llmtest.Reply{Content: "Foxes in Bree", Usage: true, PromptTokens: 12, CompletionTokens: 4},
			Completion{Content: "Foxes in Bree", FinishReason: "stop", Usage: &Usage{PromptTokens: 12, CompletionTokens: 4, TotalTokens: 16}}},
		{"no usage", llmtest.Reply{Content: "Foxes"}, Completion{Content: "Foxes", FinishReason: "stop"}},
		{"reasoning_content", llmtest.Reply{Content: "Foxes", Reasoning: "A title."},
			Completion{Content: "Foxes", Reasoning: "A title.", FinishReason: "stop"}},
		{"reasoning", llmtest.Reply{Content: "Foxes", Reasoning: "A title.", ReasoningField: "reasoning"},
			Completion{Content: "Foxes", Reasoning: "A title.", FinishReason: "stop"}},
		// Inline thinking stays in Content: StripReasoning is the
		// caller's step (and the test below shows it working).
		{"inline think is verbatim", llmtest.Reply{Content: "Foxes", Reasoning: "A title.", ThinkInline: true},
			Completion{Content: "<think>A title.</think>Foxes", FinishReason: "stop"}},
		{"tool calls", llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "now"}, {ID: "x", Name: "now", Arguments: `{"tz":"UTC"}`}}},
			Completion{FinishReason: "tool_calls", ToolCalls: []ToolCall{{ID: "call_0", Name: "now", Arguments: "{}"}, {ID: "x", Name: "now", Arguments: `{"tz":"UTC"}`}}}},
	}
	srv := llmtest.NewServer(t)
	c := New(Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.Enqueue(tt.reply)
			got, err := c.Complete(context.Background(), Endpoint{BaseURL: srv.URL}, chat("m"))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// The original's titling bug: a model that thinks inline put its
// thinking in the title.
func TestCompleteTitleOfAThinkingModel(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Default(llmtest.Reply{Reasoning: "Okay, the user wants a short title for", Content: "\n\nFoxes in Bree", ThinkInline: true})
	got, err := New(Options{}).Complete(context.Background(), Endpoint{BaseURL: srv.URL}, chat("m"))
	if err != nil {
		t.Fatal(err)
	}
	if title := StripReasoning(got.Content); title != "Foxes in Bree" {
		t.Fatalf("title %q", title)
	}
}

func TestCompleteErrors(t *testing.T) {
	srv := llmtest.NewServer(t)
	c := New(Options{})
	ctx := context.Background()

	t.Run("timeout", func(t *testing.T) {
		srv.Enqueue(llmtest.Reply{Hang: true})
		start := time.Now()
		_, err := c.Complete(ctx, Endpoint{BaseURL: srv.URL, Timeout: 300 * time.Millisecond}, chat("m"))
		checkSentence(t, err, KindTimeout, "within 300 ms.")
		if took := time.Since(start); took > 300*time.Millisecond+2*time.Second {
			t.Fatalf("took %v", took)
		}
	})
	t.Run("error object in a 200", func(t *testing.T) {
		srv.Enqueue(llmtest.Reply{ErrorMessage: "The model crashed."})
		_, err := c.Complete(ctx, Endpoint{BaseURL: srv.URL}, chat("m"))
		checkSentence(t, err, KindUpstream, "The model crashed.")
	})
	t.Run("status", func(t *testing.T) {
		srv.Enqueue(llmtest.Reply{Status: 400, ErrorMessage: "Unsupported parameter: 'max_tokens'"})
		_, err := c.Complete(ctx, Endpoint{BaseURL: srv.URL}, chat("m"))
		checkSentence(t, err, KindStatus, "400 Bad Request: Unsupported parameter: 'max_tokens'.")
	})
	t.Run("no choices", func(t *testing.T) {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"id":"x","object":"chat.completion"}`)
		}))
		defer ts.Close()
		_, err := c.Complete(ctx, Endpoint{BaseURL: ts.URL}, chat("m"))
		checkSentence(t, err, KindBadResponse, "did not answer with a chat completion")
	})
}

// A server that streams although asked not to is read as a stream.
func TestCompleteFromAStream(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"hm\"}}]}\n\n"+
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Fo\"}}]}\n\n"+
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"xes\"},\"finish_reason\":\"stop\"}]}\n\n"+
			"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2}}\n\ndata: [DONE]\n\n")
	}))
	defer ts.Close()
	got, err := New(Options{}).Complete(context.Background(), Endpoint{BaseURL: ts.URL}, chat("m"))
	want := Completion{Content: "Foxes", Reasoning: "hm", FinishReason: "stop", Usage: &Usage{PromptTokens: 5, CompletionTokens: 2, TotalTokens: 7}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v (%v)", got, err)
	}
}
