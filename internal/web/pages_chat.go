package web

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"lembas/internal/auth"
	"lembas/internal/chat"
	"lembas/internal/fault"
	"lembas/internal/reply"
)

// chatPageView is both the new-chat screen (no Chat) and a chat.
type chatPageView struct {
	Layout
	Chat     *chat.Chat
	Messages []messageView
	Picker   pickerView
	Busy     bool // a reply is being written: the button is Stop
	Efforts  []string
	Settings chatSettingsView
	Error    string
	Draft    string
}

type chatSettingsView struct {
	ChatID       string
	SystemPrompt string
	Effort       string
	Efforts      []string
	Temperature  string
	TopP         string
	MaxTokens    string
	Inherited    string // the prompt that applies when the chat sets none
	InheritedBy  string // which rung it comes from
	Errors       map[string]string
}

// newChatPage is the composer with no chat behind it: nothing is written
// until the first message is sent.
func (s *Server) newChatPage(w http.ResponseWriter, r *http.Request) error {
	u := currentUser(r)
	def, _, err := s.catalog.Default(r.Context(), *u)
	if err != nil {
		return err
	}
	picker, err := s.pickerFor(r, *u, "model", def.ID, "")
	if err != nil {
		return err
	}
	if want := r.URL.Query().Get("model"); want != "" {
		for _, m := range picker.Models {
			if m.ID == want {
				picker.Selected = m
			}
		}
	}
	return s.page(w, http.StatusOK, "chat", chatPageView{Layout: s.layout(r, "New chat"), Picker: picker})
}

// startChat writes the chat, its first message and the reply's
// placeholder in one transaction, starts the reply and sends the browser
// to the chat. Contract: form fields content and model; redirect to
// /chat/{id}.
func (s *Server) startChat(w http.ResponseWriter, r *http.Request) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	u := currentUser(r)
	content, modelID := r.PostFormValue("content"), r.PostFormValue("model")
	seed, err := s.seedFor(r.Context(), *u, modelID)
	if err == nil {
		var st chat.Started
		if st, err = s.chats.Start(r.Context(), u.ID, content, seed); err == nil {
			if _, err := s.replies.Ensure(r.Context(), st.Assistant.ID); err != nil {
				return err
			}
			http.Redirect(w, r, "/chat/"+st.Chat.ID, http.StatusSeeOther)
			return nil
		}
	}
	fe, ok := fault.As(err)
	if !ok {
		return err
	}
	// The composer comes back with what was typed and the reason.
	picker, perr := s.pickerFor(r, *u, "model", modelID, "")
	if perr != nil {
		return perr
	}
	return s.page(w, statusOf(err), "chat", chatPageView{Layout: s.layout(r, "New chat"), Picker: picker,
		Error: fe.Message, Draft: content})
}

// seedFor checks the person may use the model and copies its defaults.
func (s *Server) seedFor(ctx context.Context, u auth.User, modelID string) (chat.Seed, error) {
	if modelID == "" {
		return chat.Seed{}, fault.Field("model", "Choose a model.")
	}
	ok, err := s.catalog.CanUse(ctx, u, modelID)
	if err != nil {
		return chat.Seed{}, err
	}
	if !ok {
		return chat.Seed{}, fault.Field("model", "That model is not available to you. Choose another.")
	}
	m, err := s.catalog.GetModel(ctx, modelID)
	if err != nil {
		return chat.Seed{}, err
	}
	return chat.Seed{ModelID: m.ID, ModelName: m.Name(), Effort: m.Effort, Temperature: m.Temperature,
		TopP: m.TopP, MaxTokens: m.MaxTokens}, nil
}

func (s *Server) chatPage(w http.ResponseWriter, r *http.Request) error {
	u := currentUser(r)
	c, err := s.chats.Get(r.Context(), u.ID, r.PathValue("id"))
	if err != nil {
		return err
	}
	msgs, err := s.chats.Messages(r.Context(), c.ID)
	if err != nil {
		return err
	}
	v := chatPageView{Layout: s.layout(r, c.DisplayTitle()), Chat: &c}
	lastReply := ""
	for _, m := range msgs {
		if m.Role == chat.RoleAssistant && m.Status != chat.StatusStreaming {
			lastReply = m.ID
		}
	}
	for _, m := range msgs {
		b := bubble(m, m.ID == lastReply)
		if b.Streaming {
			v.Busy = true
			// A reply the page shows as being written must have a writer.
			if _, err := s.replies.Ensure(r.Context(), m.ID); err != nil && !errors.Is(err, reply.ErrClosing) {
				return err
			}
		}
		v.Messages = append(v.Messages, b)
	}
	if v.Settings, err = s.chatSettings(r, c); err != nil {
		return err
	}
	return s.page(w, http.StatusOK, "chat", v)
}

func (s *Server) chatSettings(r *http.Request, c chat.Chat) (chatSettingsView, error) {
	v := chatSettingsView{ChatID: c.ID, SystemPrompt: c.SystemPrompt, Effort: c.Effort, Efforts: chat.Efforts,
		Errors: map[string]string{}, Temperature: fmtFloat(c.Temperature), TopP: fmtFloat(c.TopP)}
	if c.MaxTokens != nil {
		v.MaxTokens = itoa(*c.MaxTokens)
	}
	ladder := chat.Ladder{Instance: s.settings.SystemPrompt()}
	if m, err := s.catalog.GetModel(r.Context(), c.ModelID); err == nil {
		ladder.Model = m.SystemPrompt
	}
	v.Inherited, v.InheritedBy = ladder.Resolve()
	return v, nil
}

// sendMessage adds a turn to a chat. While a reply is written the turn is
// queued. htmx gets the new bubbles to append; a plain form returns to
// the chat. Contract: form field content.
func (s *Server) sendMessage(w http.ResponseWriter, r *http.Request) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	u := currentUser(r)
	c, err := s.chats.Get(r.Context(), u.ID, r.PathValue("id"))
	if err != nil {
		return err
	}
	name := s.modelName(r.Context(), c.ModelID)
	sent, err := s.chats.Send(r.Context(), u.ID, c.ID, r.PostFormValue("content"), name)
	if err != nil {
		return err
	}
	views := []messageView{bubble(sent.User, false)}
	if !sent.Queued {
		if _, err := s.replies.Ensure(r.Context(), sent.Assistant.ID); err != nil {
			return err
		}
		views = append(views, bubble(sent.Assistant, false))
	}
	if !isHTMX(r) {
		http.Redirect(w, r, "/chat/"+c.ID, http.StatusSeeOther)
		return nil
	}
	return s.fragment(w, http.StatusOK, "messages", views)
}

func (s *Server) modelName(ctx context.Context, modelID string) string {
	if m, err := s.catalog.GetModel(ctx, modelID); err == nil {
		return m.Name()
	}
	return ""
}

// stopChat stops the reply being written in a chat. Queued turns stay
// queued: stopping is the person's decision about this reply only.
func (s *Server) stopChat(w http.ResponseWriter, r *http.Request) error {
	u := currentUser(r)
	c, err := s.chats.Get(r.Context(), u.ID, r.PathValue("id"))
	if err != nil {
		return err
	}
	if id, ok, err := s.chats.Streaming(r.Context(), c.ID); err != nil {
		return err
	} else if ok {
		s.replies.Stop(id)
	}
	if isHTMX(r) {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	http.Redirect(w, r, "/chat/"+c.ID, http.StatusSeeOther)
	return nil
}

// stopAndWait stops a chat's reply in flight and waits briefly for it to
// store what it had, before a rewind or regeneration rewrites the chat.
func (s *Server) stopAndWait(ctx context.Context, chatID string) error {
	id, ok, err := s.chats.Streaming(ctx, chatID)
	if err != nil || !ok {
		return err
	}
	s.replies.Stop(id)
	if g := s.replies.Get(id); g != nil {
		wait, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if _, err := g.Await(wait, func(s reply.Snapshot) bool { return s.Done }); err != nil {
			return fault.New(fault.Conflict, "The reply is still stopping. Try again in a moment.")
		}
	}
	return nil
}

func (s *Server) regenerate(w http.ResponseWriter, r *http.Request) error {
	u := currentUser(r)
	c, err := s.chats.Get(r.Context(), u.ID, r.PathValue("id"))
	if err != nil {
		return err
	}
	// Stop the reply only when it is the one being regenerated: an older
	// reply's button must not stop the newer one being written.
	if id, ok, err := s.chats.Streaming(r.Context(), c.ID); err != nil {
		return err
	} else if ok && id == r.PathValue("mid") {
		if err := s.stopAndWait(r.Context(), c.ID); err != nil {
			return err
		}
	}
	m, err := s.chats.ResetReply(r.Context(), u.ID, c.ID, r.PathValue("mid"), s.modelName(r.Context(), c.ModelID))
	if err != nil {
		return err
	}
	if _, err := s.replies.Restart(r.Context(), m.ID); err != nil {
		return err
	}
	if isHTMX(r) {
		return s.fragment(w, http.StatusOK, "messages", []messageView{bubble(m, false)})
	}
	http.Redirect(w, r, "/chat/"+c.ID, http.StatusSeeOther)
	return nil
}

// editMessage rewrites one of the person's turns and runs on from there:
// everything after it is deleted.
func (s *Server) editMessage(w http.ResponseWriter, r *http.Request) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	u := currentUser(r)
	c, err := s.chats.Get(r.Context(), u.ID, r.PathValue("id"))
	if err != nil {
		return err
	}
	if err := s.stopAndWait(r.Context(), c.ID); err != nil {
		return err
	}
	p, err := s.chats.Rewind(r.Context(), u.ID, c.ID, r.PathValue("mid"), r.PostFormValue("content"), s.modelName(r.Context(), c.ModelID))
	if err != nil {
		return err
	}
	if _, err := s.replies.Ensure(r.Context(), p.ID); err != nil {
		return err
	}
	http.Redirect(w, r, "/chat/"+c.ID+"#m-"+p.ID, http.StatusSeeOther)
	return nil
}

func (s *Server) withdrawMessage(w http.ResponseWriter, r *http.Request) error {
	u := currentUser(r)
	if err := s.chats.Withdraw(r.Context(), u.ID, r.PathValue("id"), r.PathValue("mid")); err != nil {
		return err
	}
	if isHTMX(r) {
		// The bubble is replaced by nothing.
		w.WriteHeader(http.StatusOK)
		return nil
	}
	http.Redirect(w, r, "/chat/"+r.PathValue("id"), http.StatusSeeOther)
	return nil
}

// renameChat sets the title from the heading. One response updates the
// heading and the sidebar row.
func (s *Server) renameChat(w http.ResponseWriter, r *http.Request) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	c, err := s.chats.Rename(r.Context(), currentUser(r).ID, r.PathValue("id"), r.PostFormValue("title"))
	if err != nil {
		return err
	}
	if isHTMX(r) {
		return s.fragment(w, http.StatusOK, "chat_title", c)
	}
	http.Redirect(w, r, "/chat/"+c.ID, http.StatusSeeOther)
	return nil
}

// saveChatSettings stores the chat settings panel: system prompt, effort
// and parameters.
func (s *Server) saveChatSettings(w http.ResponseWriter, r *http.Request) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	u := currentUser(r)
	in := chat.Settings{}
	for key, dst := range map[string]**string{"system_prompt": &in.SystemPrompt, "effort": &in.Effort,
		"temperature": &in.Temperature, "top_p": &in.TopP, "max_tokens": &in.MaxTokens} {
		if vals, ok := r.PostForm[key]; ok {
			v := vals[0]
			*dst = &v
		}
	}
	if vals, ok := r.PostForm["model"]; ok && vals[0] != "" {
		seed, err := s.seedFor(r.Context(), *u, vals[0])
		if err != nil {
			return err
		}
		in.ModelID, in.ModelSeed = &seed.ModelID, &seed
	}
	c, err := s.chats.UpdateSettings(r.Context(), u.ID, r.PathValue("id"), in)
	if err != nil {
		return err
	}
	if isHTMX(r) {
		w.Header().Set("X-Lembas-Notice", "Saved.")
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	http.Redirect(w, r, "/chat/"+c.ID, http.StatusSeeOther)
	return nil
}

// executeString renders a fragment's named template to a string, for
// stream frames.
func (s *Server) executeString(set, entry string, view any) (string, error) {
	t, err := s.views.lookup(set)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, entry, view); err != nil {
		return "", err
	}
	return buf.String(), nil
}

func fmtFloat(f *float64) string {
	if f == nil {
		return ""
	}
	return strconv.FormatFloat(*f, 'f', -1, 64)
}

func itoa(n int) string { return strconv.Itoa(n) }
