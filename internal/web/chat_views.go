package web

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"time"

	"lembas/internal/chat"
	"lembas/internal/render"
	"lembas/internal/reply"
)

// messageView is one bubble. It is built in one place (bubble) from a
// stored message and, while the reply is written, the live snapshot, so
// the page, a send, a stream frame and the done frame all render the same
// thing.
type messageView struct {
	ID        string
	ChatID    string
	User      bool
	Content   string        // the person's text (escaped by the template)
	HTML      template.HTML // a reply's rendered Markdown, from render
	Reasoning reasoningView
	Status    string
	Error     string
	ModelName string
	Streaming bool
	StreamURL string
	Queued    bool
	Last      bool // the chat's last reply: offers Regenerate
	Phase     string
	Metrics   metricsView
}

type reasoningView struct {
	MessageID string
	HTML      template.HTML
	Label     string
	Open      bool
	Present   bool
}

// metricsView is the two chips under a reply: what it cost and what the
// conversation occupies. Counts from an estimate carry "~".
type metricsView struct {
	MessageID string
	Present   bool
	Cost      string
	Speed     string
	Occupies  string
	Percent   string // "" when the context length is unknown
}

func streamURL(chatID, messageID string) string {
	return "/api/chats/" + chatID + "/messages/" + messageID + "/stream"
}

// bubble builds the view of a stored message.
func bubble(m chat.Message, last bool) messageView {
	v := messageView{ID: m.ID, ChatID: m.ChatID, User: m.Role == chat.RoleUser, Content: m.Content,
		Status: m.Status, Error: m.Error, ModelName: m.ModelName, Queued: m.Status == chat.StatusQueued, Last: last}
	if v.User {
		return v
	}
	v.Streaming = m.Status == chat.StatusStreaming
	if v.Streaming {
		v.StreamURL = streamURL(m.ChatID, m.ID)
		v.Phase = reply.PhaseWaiting
		v.HTML = render.HTML(m.Content)
	} else if m.HTML != "" {
		v.HTML = render.Stored(m.HTML)
	} else if m.Content != "" {
		v.HTML = render.HTML(m.Content)
	}
	took := time.Duration(m.ReasoningMS) * time.Millisecond
	if m.ReasoningHTML != "" {
		// Rendered once when the reply finished, never per view.
		v.Reasoning = storedReasoning(m.ID, m.ReasoningHTML, took)
	} else {
		v.Reasoning = reasoningOf(m.ID, m.Reasoning, took, v.Streaming)
	}
	v.Metrics = storedMetricsView(m)
	return v
}

// liveBubble overlays a generation's snapshot on the stored message.
func liveBubble(m chat.Message, s reply.Snapshot) messageView {
	// Built directly rather than through bubble: that would render the
	// stored partial text on every frame only to throw it away.
	v := messageView{ID: m.ID, ChatID: m.ChatID, Status: m.Status, ModelName: m.ModelName,
		Streaming: true, StreamURL: streamURL(m.ChatID, m.ID)}
	v.HTML = render.Stored(s.HTML)
	v.Phase = s.Phase
	v.Reasoning = reasoningOf(m.ID, s.Reasoning, s.Metrics.ThinkingFor, s.Phase == reply.PhaseThinking)
	v.Metrics = liveMetricsView(m.ID, s.Metrics)
	return v
}

func reasoningOf(id, text string, took time.Duration, thinking bool) reasoningView {
	if text == "" {
		return reasoningView{MessageID: id}
	}
	label := "Thinking…"
	if !thinking {
		label = "Thought for " + roundSeconds(took)
	}
	return reasoningView{MessageID: id, HTML: render.HTML(text), Label: label, Present: true}
}

// storedReasoning is reasoningOf for a finished reply whose reasoning was
// rendered when it finished.
func storedReasoning(id, stored string, took time.Duration) reasoningView {
	if stored == "" {
		return reasoningView{MessageID: id}
	}
	return reasoningView{MessageID: id, HTML: render.Stored(stored), Label: "Thought for " + roundSeconds(took), Present: true}
}

func roundSeconds(d time.Duration) string {
	s := int(math.Round(d.Seconds()))
	if s < 1 {
		return "a moment"
	}
	if s == 1 {
		return "1 second"
	}
	return strconv.Itoa(s) + " seconds"
}

func storedMetricsView(m chat.Message) metricsView {
	mm := m.Metrics
	if mm.CompletionTokens == nil {
		return metricsView{MessageID: m.ID}
	}
	l := reply.Live{PromptTokens: deref(mm.PromptTokens), CompletionTokens: deref(mm.CompletionTokens),
		ContextTokens: deref(mm.ContextTokens), Estimated: mm.Estimated, ContextLength: mm.ContextLength}
	if mm.TTFT != nil {
		l.TTFT = time.Duration(*mm.TTFT) * time.Millisecond
	}
	if mm.Duration != nil && mm.TTFT != nil {
		if secs := float64(*mm.Duration-*mm.TTFT) / 1000; secs > 0 {
			l.TokensPerSecond = float64(l.CompletionTokens) / secs
		}
	}
	return liveMetricsView(m.ID, l)
}

func liveMetricsView(id string, l reply.Live) metricsView {
	if l.PromptTokens == 0 && l.CompletionTokens == 0 {
		return metricsView{MessageID: id}
	}
	approx := ""
	if l.Estimated {
		approx = "~"
	}
	v := metricsView{MessageID: id, Present: true,
		Cost:     fmt.Sprintf("%s%s in · %s%s out", approx, count(l.PromptTokens), approx, count(l.CompletionTokens)),
		Occupies: approx + count(l.ContextTokens) + " tokens"}
	var speed []string
	if l.TokensPerSecond > 0 {
		speed = append(speed, fmt.Sprintf("%.0f tokens/s", l.TokensPerSecond))
	}
	if l.TTFT > 0 {
		if l.TTFT < time.Second {
			speed = append(speed, fmt.Sprintf("%d ms to first token", l.TTFT.Milliseconds()))
		} else {
			speed = append(speed, fmt.Sprintf("%.1f s to first token", l.TTFT.Seconds()))
		}
	}
	for i, s := range speed {
		if i > 0 {
			v.Speed += " · "
		}
		v.Speed += s
	}
	// Unknown is not zero: no percentage without a context length.
	if l.ContextLength > 0 {
		v.Percent = fmt.Sprintf("%s%.0f%% of %s", approx, 100*float64(l.ContextTokens)/float64(l.ContextLength), count(l.ContextLength))
	}
	return v
}

func count(n int) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 10_000:
		return fmt.Sprintf("%.0fk", float64(n)/1e3)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return strconv.Itoa(n)
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// phaseText is the line a live reply shows while nothing is visible yet or
// it is busy elsewhere.
func phaseText(phase string) string {
	return map[string]string{
		reply.PhaseWaiting:   flavourLine("loading"),
		reply.PhaseThinking:  "Thinking…",
		reply.PhaseTools:     "Using tools…",
		reply.PhaseAsking:    "Waiting for you…",
		reply.PhaseFinishing: "Finishing…",
	}[phase]
}
