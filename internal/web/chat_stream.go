package web

import (
	"context"
	"net/http"
	"time"

	"lembas/internal/chat"
	"lembas/internal/reply"
)

// frameEvery is the shortest gap between two frames to one follower.
const frameEvery = 100 * time.Millisecond

// metricsEvery is the shortest gap between two metrics frames.
const metricsEvery = time.Second

// keepaliveEvery keeps proxies from closing a quiet stream (a model
// thinking for a minute sends nothing).
const keepaliveEvery = 15 * time.Second

// titleWait is how long a stream stays open after its reply to deliver
// the chat's new title.
const titleWait = 60 * time.Second

// followReply streams a reply to one browser. It only follows: the reply
// is written by its generation whether anybody watches or not, and this
// connection closing changes nothing about it. Each frame carries a whole
// block — the rendered answer, the reasoning, the metrics, the status —
// never a delta, so a follower arriving late (or reconnecting) has
// nothing earlier to append to and sees everything at once.
func (s *Server) followReply(w http.ResponseWriter, r *http.Request) error {
	u := currentUser(r)
	ctx := r.Context()
	m, err := s.chats.Message(ctx, u.ID, r.PathValue("id"), r.PathValue("mid"))
	if err != nil {
		return err
	}
	g, err := s.replies.Ensure(ctx, m.ID)
	if err != nil && err != reply.ErrClosing {
		return err
	}
	out := newSSE(w)
	_ = out.retry(2 * time.Second)
	if g == nil {
		return s.sendDone(ctx, out, m.ID, reply.Snapshot{Done: true, Titled: true})
	}

	var sent uint64
	last := map[string]string{}
	lastFrame := time.Time{}
	var metricsAt time.Time // the metrics chips change every frame; once a second is enough
	keepalive := time.NewTicker(keepaliveEvery)
	defer keepalive.Stop()
	for {
		changed := g.Changed()
		snap := g.Snapshot()
		if snap.Done {
			return s.sendDone(ctx, out, m.ID, snap)
		}
		if snap.Version != sent || sent == 0 {
			if err := s.sendFrames(out, m, snap, last, &metricsAt); err != nil {
				return nil // the browser went away; the reply goes on
			}
			sent, lastFrame = snap.Version, time.Now()
		}
		select {
		case <-ctx.Done():
			return nil
		case <-s.quit:
			return nil
		case <-keepalive.C:
			if out.comment("keepalive") != nil {
				return nil
			}
		case <-changed:
			// At most one frame per frameEvery: let changes gather. The
			// first words go out at once: the throttle is for the flow,
			// not for the start of it.
			if wait := frameEvery - time.Since(lastFrame); wait > 0 && last["render"] != "" {
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(wait):
				}
			}
		}
	}
}

// sendFrames sends the blocks that changed since the last frame. The
// answer and the reasoning are only sent when they have something in them,
// so a frame never blanks what is shown; metrics and status are sent
// whenever they change, empty included, because each must be able to
// clear itself.
func (s *Server) sendFrames(out *sseWriter, m chat.Message, snap reply.Snapshot, last map[string]string, metricsAt *time.Time) error {
	v := liveBubble(m, snap)
	frames := []struct {
		name, set, entry string
		view             any
		always           bool
	}{
		{"reasoning", "fragments/message", "reasoning", v.Reasoning, false},
		{"render", "fragments/message", "message-body", v, false},
		{"metrics", "fragments/message", "metrics", v.Metrics, true},
		{"status", "fragments/message", "status", v, true},
	}
	for _, f := range frames {
		if f.name == "render" && snap.Content == "" {
			continue
		}
		if f.name == "reasoning" && snap.Reasoning == "" {
			continue
		}
		if f.name == "metrics" && last["metrics"] != "" && time.Since(*metricsAt) < metricsEvery {
			continue
		}
		html, err := s.executeString(f.set, f.entry, f.view)
		if err != nil {
			return err
		}
		if last[f.name] == html {
			continue
		}
		out.queue(f.name, html)
		last[f.name] = html
		if f.name == "metrics" {
			*metricsAt = time.Now()
		}
	}
	// One write for the whole frame.
	return out.flush()
}

// sendDone sends the finished bubble as the database has it (the row is
// written before done is set, so it is authoritative), then the next
// queued turn's reply if one started, then waits a while for the chat's
// new title.
func (s *Server) sendDone(ctx context.Context, out *sseWriter, messageID string, snap reply.Snapshot) error {
	m, err := s.chats.MessageByID(ctx, messageID)
	if err != nil {
		return nil
	}
	views := []messageView{bubble(m, true)}
	if snap.Next != "" {
		if next, err := s.chats.MessageByID(ctx, snap.Next); err == nil {
			views[0].Last = false
			// The delivered turn comes too: it is no longer waiting.
			if msgs, err := s.chats.Messages(ctx, next.ChatID); err == nil {
				for i, x := range msgs {
					if x.ID == next.ID && i > 0 && msgs[i-1].Role == chat.RoleUser {
						views = append(views, bubble(msgs[i-1], false))
					}
				}
			}
			views = append(views, bubble(next, false))
		}
	}
	html, err := s.executeString("fragments/messages", "fragment", views)
	if err != nil {
		return err
	}
	if err := out.event("done", html); err != nil {
		return nil
	}
	// A title made before done was read still has to be sent.
	if snap.Titled && snap.Title == "" {
		return nil
	}
	g := s.replies.Get(messageID)
	if g == nil {
		return nil
	}
	timeout := time.After(titleWait)
	for {
		changed := g.Changed()
		snap := g.Snapshot()
		if snap.Titled {
			if snap.Title == "" {
				return nil
			}
			c, err := s.chats.ChatByID(ctx, snap.ChatID)
			if err != nil {
				return nil
			}
			html, err := s.executeString("fragments/chat_title", "fragment", c)
			if err == nil {
				_ = out.event("title", html)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-timeout:
			return nil
		case <-changed:
		}
	}
}
