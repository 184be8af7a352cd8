package web

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"lembas/internal/settings"
)

func (s *Server) adminIndex(w http.ResponseWriter, r *http.Request) error {
	http.Redirect(w, r, "/admin/general", http.StatusSeeOther)
	return nil
}

// adminGeneralView edits the instance name and sign-up, and says which
// values came from the environment.
type adminGeneralView struct {
	Layout
	General  settings.General
	Sources  map[string]settings.Source
	EnvNames map[string]string
	Errors   map[string]string
	Notice   string
}

func (s *Server) adminGeneralView(r *http.Request) adminGeneralView {
	v := adminGeneralView{Layout: s.layout(r, "General"), General: s.settings.General(),
		Sources: map[string]settings.Source{}, EnvNames: map[string]string{}, Errors: map[string]string{},
		Notice: noticeText(r.URL.Query().Get("done"))}
	for _, k := range []string{settings.KeyInstanceName, settings.KeyAllowSignup} {
		v.Sources[k] = s.settings.Source(k)
		v.EnvNames[k] = settings.EnvName(k)
	}
	return v
}

// settingSource is what the "from the environment" hint needs.
type settingSource struct {
	Source settings.Source
	Env    string
}

// Src describes where the setting key's value came from.
func (v adminGeneralView) Src(key string) settingSource {
	return settingSource{Source: v.Sources[key], Env: v.EnvNames[key]}
}

func (s *Server) adminGeneralPage(w http.ResponseWriter, r *http.Request) error {
	return s.page(w, http.StatusOK, "admin_general", s.adminGeneralView(r))
}

const (
	maxInstanceName   = 60
	maxInstancePrompt = 20_000
)

func (s *Server) saveAdminGeneral(w http.ResponseWriter, r *http.Request) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	g := settings.General{
		InstanceName: strings.TrimSpace(r.PostFormValue("instance_name")),
		AllowSignup:  r.PostFormValue("allow_signup") == "on",
		SystemPrompt: strings.TrimSpace(r.PostFormValue("system_prompt")),
	}
	if utf8.RuneCountInString(g.InstanceName) > maxInstanceName {
		v := s.adminGeneralView(r)
		v.General = g
		v.Errors["instance_name"] = "An instance name has at most 60 characters."
		return s.page(w, http.StatusUnprocessableEntity, "admin_general", v)
	}
	if utf8.RuneCountInString(g.SystemPrompt) > maxInstancePrompt {
		v := s.adminGeneralView(r)
		v.General = g
		v.Errors["system_prompt"] = "A system prompt has at most 20,000 characters."
		return s.page(w, http.StatusUnprocessableEntity, "admin_general", v)
	}
	if err := s.settings.SaveGeneral(r.Context(), g); err != nil {
		return err
	}
	http.Redirect(w, r, "/admin/general?done=saved", http.StatusSeeOther)
	return nil
}
