package web

import (
	"net/http"
	"slices"
	"time"

	"lembas/internal/auth"
	"lembas/internal/catalog"
	"lembas/internal/fault"
)

// settingsView is a person's own preferences page.
type settingsView struct {
	Layout
	Themes   []string
	Sessions []sessionRow
	Errors   map[string]string
	Notice   string
	Prefs    struct {
		Timezone string
	}
	ModelPicker pickerView
}

type sessionRow struct {
	ID        string
	Current   bool
	UserAgent string
	Browser   string // "Firefox on Linux"
	IP        string
	LastSeen  time.Time
	Created   time.Time
}

func (s *Server) settingsView(r *http.Request) (settingsView, error) {
	u, cur := currentUser(r), currentSession(r)
	list, err := s.auth.Sessions(r.Context(), u.ID)
	if err != nil {
		return settingsView{}, err
	}
	v := settingsView{Layout: s.layout(r, "Settings"), Themes: auth.Themes, Errors: map[string]string{}}
	for _, ss := range list {
		v.Sessions = append(v.Sessions, sessionRow{ID: ss.ID, Current: cur != nil && ss.ID == cur.ID,
			UserAgent: ss.UserAgent, Browser: describeAgent(ss.UserAgent), IP: ss.IP, LastSeen: ss.LastSeenAt, Created: ss.CreatedAt})
	}
	v.Notice = noticeText(r.URL.Query().Get("done"))
	v.Prefs.Timezone = u.Timezone
	if v.ModelPicker, err = s.pickerFor(r, *u, "default_model", u.DefaultModelID, "The instance default"); err != nil {
		return settingsView{}, err
	}
	return v, nil
}

// noticeText turns a ?done= marker from a redirect into a sentence. Only
// known markers show anything, so a link cannot put words on the page.
func noticeText(key string) string {
	return map[string]string{
		"password":        "Your password has been changed.",
		"sessions":        "Every other session has been signed out.",
		"session-revoked": "That session has been signed out.",
		"saved":           "Saved.",
	}[key]
}

func (s *Server) settingsPage(w http.ResponseWriter, r *http.Request) error {
	v, err := s.settingsView(r)
	if err != nil {
		return err
	}
	return s.page(w, http.StatusOK, "settings", v)
}

// saveTheme stores the theme on the account. The page has already applied
// it in the browser; an htmx request gets 204, a plain form a redirect.
func (s *Server) saveTheme(w http.ResponseWriter, r *http.Request) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	theme := r.PostFormValue("theme")
	if err := s.auth.SetTheme(r.Context(), currentUser(r).ID, theme); err != nil {
		return err
	}
	setThemeCookie(w, r, theme)
	if isHTMX(r) {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	http.Redirect(w, r, safeNext(r.Referer()), http.StatusSeeOther)
	return nil
}

func (s *Server) changePassword(w http.ResponseWriter, r *http.Request) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	u := currentUser(r)
	next := r.PostFormValue("new_password")
	var err error
	if next != r.PostFormValue("new_password_confirm") {
		err = fault.Field("new_password_confirm", "The two new passwords do not match.")
	} else {
		err = s.auth.ChangePassword(r.Context(), u.ID, r.PostFormValue("current_password"), next)
	}
	if fe, ok := fault.As(err); ok && fe.Field != "" {
		v, verr := s.settingsView(r)
		if verr != nil {
			return verr
		}
		v.Errors[fe.Field] = fe.Message
		return s.page(w, http.StatusUnprocessableEntity, "settings", v)
	}
	if err != nil {
		return err
	}
	// A changed password ends every other session: whoever knew the old
	// one should not stay signed in.
	if _, err := s.auth.RevokeOtherSessions(r.Context(), u.ID, currentSession(r).ID); err != nil {
		return err
	}
	http.Redirect(w, r, "/settings?done=password", http.StatusSeeOther)
	return nil
}

func (s *Server) revokeOtherSessions(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.auth.RevokeOtherSessions(r.Context(), currentUser(r).ID, currentSession(r).ID); err != nil {
		return err
	}
	http.Redirect(w, r, "/settings?done=sessions", http.StatusSeeOther)
	return nil
}

func (s *Server) revokeSession(w http.ResponseWriter, r *http.Request) error {
	if err := s.auth.RevokeSession(r.Context(), currentUser(r).ID, r.PathValue("id")); err != nil {
		return err
	}
	http.Redirect(w, r, "/settings?done=session-revoked", http.StatusSeeOther)
	return nil
}

// savePreferences stores the time zone (and, where the form carries one,
// the default model). A field the form did not send keeps its value, so
// the browser can store its detected zone alone.
func (s *Server) savePreferences(w http.ResponseWriter, r *http.Request) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	u := currentUser(r)
	tz, model := u.Timezone, u.DefaultModelID
	if _, ok := r.PostForm["timezone"]; ok {
		tz = r.PostFormValue("timezone")
	}
	if _, ok := r.PostForm["default_model"]; ok {
		model = r.PostFormValue("default_model")
	}
	// Only a model this person may pick can be their default.
	var err error
	if model != "" && model != u.DefaultModelID {
		models, verr := s.catalog.VisibleTo(r.Context(), *u)
		if verr != nil {
			return verr
		}
		if !slices.ContainsFunc(models, func(m catalog.PickerModel) bool { return m.ID == model }) {
			err = fault.Field("default_model_id", "Choose a model from the list.")
		}
	}
	if err == nil {
		err = s.auth.SetPreferences(r.Context(), u.ID, tz, model)
	}
	if fe, ok := fault.As(err); ok && fe.Field != "" {
		if isHTMX(r) {
			return err
		}
		v, verr := s.settingsView(r)
		if verr != nil {
			return verr
		}
		v.Errors[fe.Field] = fe.Message
		v.Prefs.Timezone = tz
		return s.page(w, http.StatusUnprocessableEntity, "settings", v)
	}
	if err != nil {
		return err
	}
	if isHTMX(r) {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	http.Redirect(w, r, "/settings?done=saved", http.StatusSeeOther)
	return nil
}
