package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"lembas/internal/auth"
	"lembas/internal/catalog"
	"lembas/internal/fault"
)

const modelsPerPage = 50

// adminModelsView is the model list: search, filter tabs, pagination, a
// compact row per model with its quick actions, and bulk actions. The full
// settings form lives on each model's own page.
type adminModelsView struct {
	Layout
	Models      []catalog.Model
	Pager       pager
	Filter      catalog.Filter
	Tabs        []modelTab
	Connections []catalog.Connection
	Caps        []string
	Notice      string
	Back        string // this page's URL, to return to after a row action
}

type modelTab struct {
	Key, Label string
	Current    bool
	URL        string
}

func (s *Server) adminModelsPage(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	f := catalog.Filter{Query: strings.TrimSpace(q.Get("q")), Tab: q.Get("tab"), ConnectionID: q.Get("connection"),
		Capability: q.Get("cap"), Limit: modelsPerPage, Offset: offsetParam(r)}
	models, total, err := s.catalog.ListModels(r.Context(), f)
	if err != nil {
		return err
	}
	conns, err := s.catalog.ListConnections(r.Context())
	if err != nil {
		return err
	}
	extra := url.Values{}
	for k, v := range map[string]string{"tab": f.Tab, "connection": f.ConnectionID, "cap": f.Capability} {
		if v != "" {
			extra.Set(k, v)
		}
	}
	v := adminModelsView{Layout: s.layout(r, "Models"), Models: models, Filter: f, Connections: conns,
		Caps:   []string{"vision", "tools", "reasoning", "embedding"},
		Pager:  pager{Total: total, Offset: f.Offset, Limit: modelsPerPage, Query: f.Query, Base: "/admin/models", Extra: extra},
		Notice: noticeText(q.Get("done")), Back: r.URL.RequestURI()}
	for _, t := range []struct{ key, label string }{
		{catalog.TabAll, "All"}, {catalog.TabEnabled, "Enabled"}, {catalog.TabHidden, "Hidden"},
		{catalog.TabDisabled, "Disabled"}, {catalog.TabUnavailable, "No longer offered"},
	} {
		tq := url.Values{}
		for k, vs := range extra {
			tq[k] = vs
		}
		tq.Del("tab")
		if t.key != catalog.TabAll {
			tq.Set("tab", t.key)
		}
		if f.Query != "" {
			tq.Set("q", f.Query)
		}
		u := "/admin/models"
		if len(tq) > 0 {
			u += "?" + tq.Encode()
		}
		current := f.Tab == t.key || (f.Tab == "" && t.key == catalog.TabAll)
		v.Tabs = append(v.Tabs, modelTab{Key: t.key, Label: t.label, Current: current, URL: u})
	}
	return s.page(w, http.StatusOK, "admin_models", v)
}

// backTo returns to the list the action came from (a local path only).
func backTo(w http.ResponseWriter, r *http.Request, fallback string) {
	next := safeNext(r.PostFormValue("back"))
	if next == "/" {
		next = fallback
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// toggleModel answers the row actions that flip one flag: the form's
// "on" field says which way.
func (s *Server) toggleModel(w http.ResponseWriter, r *http.Request, set func(ctx context.Context, id string, on bool) error) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	if err := set(r.Context(), r.PathValue("id"), r.PostFormValue("on") == "true"); err != nil {
		return err
	}
	backTo(w, r, "/admin/models")
	return nil
}

func (s *Server) pinModel(w http.ResponseWriter, r *http.Request) error {
	return s.toggleModel(w, r, s.catalog.SetPinned)
}

func (s *Server) enableModel(w http.ResponseWriter, r *http.Request) error {
	return s.toggleModel(w, r, s.catalog.SetEnabled)
}

func (s *Server) hideModel(w http.ResponseWriter, r *http.Request) error {
	return s.toggleModel(w, r, s.catalog.SetHidden)
}

// defaultModel makes the model the instance default, or clears the
// default when "on" is false.
func (s *Server) defaultModel(w http.ResponseWriter, r *http.Request) error {
	return s.toggleModel(w, r, func(ctx context.Context, id string, on bool) error {
		if !on {
			id = ""
		}
		return s.catalog.SetDefault(ctx, id)
	})
}

func (s *Server) moveModel(w http.ResponseWriter, r *http.Request) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	dirs := map[string]catalog.Direction{"up": catalog.Up, "down": catalog.Down, "top": catalog.Top, "bottom": catalog.Bottom}
	dir, ok := dirs[r.PostFormValue("direction")]
	if !ok {
		return fault.Field("direction", "Choose up, down, top or bottom.")
	}
	if err := s.catalog.Move(r.Context(), r.PathValue("id"), dir); err != nil {
		return err
	}
	backTo(w, r, "/admin/models")
	return nil
}

// reorderModels takes the order of a page of models after a drag: repeated
// id fields, in their new order.
func (s *Server) reorderModels(w http.ResponseWriter, r *http.Request) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	if err := s.catalog.Reorder(r.Context(), r.PostForm["id"]); err != nil {
		return err
	}
	if isHTMX(r) {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	backTo(w, r, "/admin/models")
	return nil
}

func (s *Server) bulkModels(w http.ResponseWriter, r *http.Request) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	action := catalog.BulkAction(r.PostFormValue("action"))
	if _, err := s.catalog.Bulk(r.Context(), r.PostForm["id"], action); err != nil {
		return err
	}
	backTo(w, r, "/admin/models")
	return nil
}

// adminModelView is one model's settings page.
type adminModelView struct {
	Layout
	Model   catalog.Model
	Form    catalog.ModelForm
	Efforts []string
	Groups  []groupChoice
	Errors  map[string]string
	Notice  string
}

type groupChoice struct {
	ID, Name string
	Chosen   bool
}

func (s *Server) adminModelView(r *http.Request, id string) (adminModelView, error) {
	m, err := s.catalog.GetModel(r.Context(), id)
	if err != nil {
		return adminModelView{}, err
	}
	groups, err := s.auth.ListGroups(r.Context())
	if err != nil {
		return adminModelView{}, err
	}
	chosen := map[string]bool{}
	for _, g := range m.GroupIDs {
		chosen[g] = true
	}
	v := adminModelView{Layout: s.layout(r, m.Name()), Model: m, Form: catalog.FormOf(m), Efforts: catalog.Efforts(),
		Errors: map[string]string{}, Notice: noticeText(r.URL.Query().Get("done"))}
	for _, g := range groups {
		v.Groups = append(v.Groups, groupChoice{ID: g.ID, Name: g.Name, Chosen: chosen[g.ID]})
	}
	return v, nil
}

func (s *Server) adminModelPage(w http.ResponseWriter, r *http.Request) error {
	v, err := s.adminModelView(r, r.PathValue("id"))
	if err != nil {
		return err
	}
	return s.page(w, http.StatusOK, "admin_model", v)
}

// modelMistake shows the settings page again with err beside its field.
func (s *Server) modelMistake(w http.ResponseWriter, r *http.Request, err error, keep func(*adminModelView)) error {
	fe, ok := fault.As(err)
	if !ok || fe.Kind == fault.NotFound {
		return err
	}
	v, verr := s.adminModelView(r, r.PathValue("id"))
	if verr != nil {
		return verr
	}
	if keep != nil {
		keep(&v)
	}
	field := fe.Field
	if field == "" {
		field = "form"
	}
	v.Errors[field] = fe.Message
	return s.page(w, statusOf(err), "admin_model", v)
}

func (s *Server) saveModel(w http.ResponseWriter, r *http.Request) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	id := r.PathValue("id")
	f := catalog.ParseModelForm(r.PostForm)
	if _, err := s.catalog.UpdateModel(r.Context(), id, f); err != nil {
		return s.modelMistake(w, r, err, func(v *adminModelView) { v.Form = f })
	}
	http.Redirect(w, r, "/admin/models/"+id+"/edit?done=saved", http.StatusSeeOther)
	return nil
}

func (s *Server) saveModelGroups(w http.ResponseWriter, r *http.Request) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	id := r.PathValue("id")
	if err := s.catalog.SetGroups(r.Context(), id, r.PostForm["group"]); err != nil {
		return s.modelMistake(w, r, err, nil)
	}
	http.Redirect(w, r, "/admin/models/"+id+"/edit?done=saved", http.StatusSeeOther)
	return nil
}

// maxAvatarUpload caps the upload; the catalog refuses larger pictures
// with its own sentence before decoding.
const maxAvatarUpload = 6 << 20

func (s *Server) uploadModelAvatar(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	r.Body = http.MaxBytesReader(w, r.Body, maxAvatarUpload)
	file, _, err := r.FormFile("avatar")
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return s.modelMistake(w, r, fault.Field("avatar", "That picture is too large; the limit is 5 MB."), nil)
		}
		return s.modelMistake(w, r, fault.Field("avatar", "Choose a PNG, JPEG or WebP picture."), nil)
	}
	defer file.Close()
	if err := s.catalog.SetAvatar(r.Context(), id, file); err != nil {
		return s.modelMistake(w, r, err, nil)
	}
	http.Redirect(w, r, "/admin/models/"+id+"/edit?done=saved", http.StatusSeeOther)
	return nil
}

func (s *Server) deleteModelAvatar(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := s.catalog.ClearAvatar(r.Context(), id); err != nil {
		return err
	}
	http.Redirect(w, r, "/admin/models/"+id+"/edit?done=saved", http.StatusSeeOther)
	return nil
}

// modelAvatar serves a model's picture to anyone signed in who may use the
// model. Avatars are always PNGs we wrote ourselves, re-encoded.
func (s *Server) modelAvatar(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	u := currentUser(r)
	if !u.IsAdmin {
		ok, err := s.catalog.CanUse(r.Context(), *u, id)
		if err != nil {
			return err
		}
		if !ok {
			return catalog.ErrNoAvatar
		}
	}
	path, err := s.catalog.AvatarPath(r.Context(), id)
	if err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return catalog.ErrNoAvatar
	}
	defer f.Close()
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Cache-Control", "private, max-age=31536000, immutable")
	http.ServeContent(w, r, "", time.Time{}, f)
	return nil
}

// pickerView feeds the model picker partial.
type pickerView struct {
	Name     string // the form field the chosen id is submitted as
	Models   []catalog.PickerModel
	Selected catalog.PickerModel
	Empty    string // what to show with nothing chosen
	Form     string // the form the hidden input belongs to, if not its own
}

// pickerFor builds the picker over the models u may use, with selectedID
// chosen when it is one of them.
func (s *Server) pickerFor(r *http.Request, u auth.User, name, selectedID, empty string) (pickerView, error) {
	models, err := s.catalog.VisibleTo(r.Context(), u)
	if err != nil {
		return pickerView{}, err
	}
	v := pickerView{Name: name, Models: models, Empty: empty}
	for _, m := range models {
		if m.ID == selectedID {
			v.Selected = m
		}
	}
	return v, nil
}
