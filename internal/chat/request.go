package chat

import (
	"context"
	"strings"
	"unicode"
	"unicode/utf8"

	"lembas/internal/llm"
)

// Rungs of the system-prompt ladder, most specific first.
const (
	RungChat     = "chat"
	RungFolder   = "folder"
	RungModel    = "model"
	RungInstance = "instance"
)

// Ladder holds the system prompt set at each rung. The most specific one
// that is set wins outright; they are never concatenated. (The folder rung
// sits above the model deliberately: a model's prompt describes the model
// wherever it is used, a folder's describes this piece of work.)
type Ladder struct {
	Chat, Folder, Model, Instance string
}

// Resolve returns the prompt in force and the rung it came from; "" and ""
// when no rung sets one.
func (l Ladder) Resolve() (prompt, rung string) {
	for _, r := range []struct{ text, name string }{
		{l.Chat, RungChat}, {l.Folder, RungFolder}, {l.Model, RungModel}, {l.Instance, RungInstance},
	} {
		if strings.TrimSpace(r.text) != "" {
			return strings.TrimSpace(r.text), r.name
		}
	}
	return "", ""
}

// Target is what a request needs to know about its model.
type Target struct {
	UpstreamName string
	Vision       bool
}

// BuildRequest makes the request for the reply whose placeholder is
// replyID: the system prompt in force, then every turn before the reply
// that is context. Queued turns are not context (they have not been
// sent), reasoning never is, and a reply with nothing in it is left out.
// Two turns of the same role in a row are joined, because many chat
// templates refuse anything but alternation.
func BuildRequest(c Chat, target Target, ladder Ladder, history []Message, replyID string) llm.ChatRequest {
	req := llm.ChatRequest{
		Model:       target.UpstreamName,
		Temperature: c.Temperature,
		TopP:        c.TopP,
		MaxTokens:   c.MaxTokens,
		Effort:      c.Effort,
	}
	if prompt, _ := ladder.Resolve(); prompt != "" {
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleSystem, Content: prompt})
	}
	for _, m := range history {
		if m.ID == replyID {
			break
		}
		if m.Status == StatusQueued || strings.TrimSpace(m.Content) == "" {
			continue
		}
		role := llm.RoleUser
		if m.Role == RoleAssistant {
			role = llm.RoleAssistant
		}
		if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == role {
			req.Messages[n-1].Content += "\n\n" + m.Content
			continue
		}
		req.Messages = append(req.Messages, llm.Message{Role: role, Content: m.Content})
	}
	return req
}

// EstimateTokens is the fallback when a server reports no usage: four
// characters to a token, rounded up. Anything derived from it is shown
// with "~".
func EstimateTokens(s string) int {
	n := utf8.RuneCountInString(s)
	return (n + 3) / 4
}

// EstimateRequest estimates a request's prompt tokens.
func EstimateRequest(req llm.ChatRequest) int {
	total := 0
	for _, m := range req.Messages {
		total += EstimateTokens(m.Content) + 4 // a few tokens of framing per turn
	}
	return total
}

// Completer makes one non-streaming completion; llm.Client satisfies it.
type Completer interface {
	Complete(ctx context.Context, ep llm.Endpoint, req llm.ChatRequest) (llm.Completion, error)
}

// TitleMaxTokens is generous on purpose: a model that thinks first spends
// its budget thinking, and too small a budget is not a shorter title but
// no title.
const TitleMaxTokens = 2048

const titleInstruction = "Write a short title (at most six words) for the conversation below. " +
	"Answer with the title only: no quotes, no punctuation at the end, no explanation."

// MakeTitle asks the model for a title for the first exchange, and falls
// back to the first prompt, trimmed, when the call fails or comes back
// empty. source is "auto" or "prompt".
func MakeTitle(ctx context.Context, cm Completer, ep llm.Endpoint, model, prompt, reply string) (title, source string) {
	req := llm.ChatRequest{
		Model:     model,
		MaxTokens: ptr(TitleMaxTokens),
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: titleInstruction},
			{Role: llm.RoleUser, Content: "Person: " + clip(prompt, 2000) + "\n\nAssistant: " + clip(llm.StripReasoning(reply), 2000)},
		},
	}
	if cm != nil {
		if out, err := cm.Complete(ctx, ep, req); err == nil {
			if t := cleanTitle(llm.StripReasoning(out.Content)); t != "" {
				return t, "auto"
			}
		}
	}
	return PromptTitle(prompt), "prompt"
}

// PromptTitle makes a title from the first prompt: its first line, cut at
// a word near sixty characters.
func PromptTitle(prompt string) string {
	line := strings.TrimSpace(prompt)
	if i := strings.IndexAny(line, "\r\n"); i >= 0 {
		line = line[:i]
	}
	line = strings.Join(strings.Fields(line), " ")
	if utf8.RuneCountInString(line) <= 60 {
		if line == "" {
			return "New chat"
		}
		return line
	}
	r := []rune(line)[:60]
	cut := string(r)
	if i := strings.LastIndex(cut, " "); i > 30 {
		cut = cut[:i]
	}
	return strings.TrimRightFunc(cut, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSpace(r) }) + "…"
}

// cleanTitle tidies what a model answered: the first non-empty line,
// quotes and a "Title:" label removed, at most MaxTitle characters.
func cleanTitle(s string) string {
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		line = strings.TrimPrefix(strings.TrimPrefix(line, "Title:"), "title:")
		// Markdown emphasis and code marks are not part of a title.
		line = strings.NewReplacer("**", "", "__", "", "`", "").Replace(line)
		line = strings.Trim(strings.TrimSpace(line), "\"'*_#“”‘’ ")
		line = strings.TrimRight(line, ".")
		if line == "" {
			continue
		}
		if utf8.RuneCountInString(line) > MaxTitle {
			line = string([]rune(line)[:MaxTitle])
		}
		// A "title" of fifteen words is a model that did not listen.
		if len(strings.Fields(line)) > 14 {
			return ""
		}
		return line
	}
	return ""
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

func ptr[T any](v T) *T { return &v }
