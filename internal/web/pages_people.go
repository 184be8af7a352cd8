package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"lembas/internal/auth"
	"lembas/internal/fault"
)

// pager is the pagination strip of an admin list.
type pager struct {
	Total, Offset, Limit int
	Query                string
	Base                 string // the list's path
	Extra                url.Values
}

func (p pager) From() int { return min(p.Offset+1, p.Total) }
func (p pager) To() int   { return min(p.Offset+p.Limit, p.Total) }

func (p pager) link(offset int) string {
	v := url.Values{}
	for k, vs := range p.Extra {
		v[k] = vs
	}
	if p.Query != "" {
		v.Set("q", p.Query)
	}
	if offset > 0 {
		v.Set("offset", strconv.Itoa(offset))
	}
	if len(v) == 0 {
		return p.Base
	}
	return p.Base + "?" + v.Encode()
}

// Prev and Next are links to the neighbouring pages, "" at the ends.
func (p pager) Prev() string {
	if p.Offset <= 0 {
		return ""
	}
	return p.link(max(0, p.Offset-p.Limit))
}

func (p pager) Next() string {
	if p.Offset+p.Limit >= p.Total {
		return ""
	}
	return p.link(p.Offset + p.Limit)
}

func offsetParam(r *http.Request) int {
	n, _ := strconv.Atoi(r.URL.Query().Get("offset"))
	return max(0, n)
}

// ---- users ----

type adminUsersView struct {
	Layout
	Users  []auth.User
	Pager  pager
	Errors map[string]string
	Form   struct {
		Username string
		Admin    bool
	}
}

const usersPerPage = 50

func (s *Server) adminUsersView(r *http.Request) (adminUsersView, error) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	off := offsetParam(r)
	users, total, err := s.auth.ListUsers(r.Context(), q, usersPerPage, off)
	if err != nil {
		return adminUsersView{}, err
	}
	return adminUsersView{Layout: s.layout(r, "Users"), Users: users, Errors: map[string]string{},
		Pager: pager{Total: total, Offset: off, Limit: usersPerPage, Query: q, Base: "/admin/users"}}, nil
}

func (s *Server) adminUsersPage(w http.ResponseWriter, r *http.Request) error {
	v, err := s.adminUsersView(r)
	if err != nil {
		return err
	}
	return s.page(w, http.StatusOK, "admin_users", v)
}

func (s *Server) createUser(w http.ResponseWriter, r *http.Request) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	username, admin := r.PostFormValue("username"), r.PostFormValue("admin") == "on"
	u, err := s.auth.CreateUser(r.Context(), username, r.PostFormValue("password"), admin)
	if fe, ok := fault.As(err); ok && fe.Field != "" {
		v, verr := s.adminUsersView(r)
		if verr != nil {
			return verr
		}
		v.Errors[fe.Field] = fe.Message
		v.Form.Username, v.Form.Admin = username, admin
		return s.page(w, statusOf(err), "admin_users", v)
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, "/admin/users/"+u.ID+"?done=created", http.StatusSeeOther)
	return nil
}

type adminUserView struct {
	Layout
	Subject     auth.User
	Groups      []auth.Group
	Explain     []auth.Explanation
	Limits      []limitRow
	Usage       auth.Usage
	IsSelf      bool
	Errors      map[string]string
	Notice      string
	NoticeError string
}

// limitRow is one quota axis as it resolves for a person.
type limitRow struct {
	Label string
	Value string
}

func (s *Server) adminUserView(r *http.Request, id string) (adminUserView, error) {
	ctx := r.Context()
	u, err := s.auth.UserByID(ctx, id)
	if err != nil {
		return adminUserView{}, err
	}
	groups, err := s.auth.GroupsOf(ctx, id)
	if err != nil {
		return adminUserView{}, err
	}
	explain, err := s.auth.Explain(ctx, u)
	if err != nil {
		return adminUserView{}, err
	}
	limits, err := s.auth.LimitsFor(ctx, u)
	if err != nil {
		return adminUserView{}, err
	}
	usage, err := s.auth.UsageThisMonth(ctx, id)
	if err != nil {
		return adminUserView{}, err
	}
	v := adminUserView{Layout: s.layout(r, u.Username), Subject: u, Groups: groups, Explain: explain,
		Usage: usage, IsSelf: currentUser(r).ID == id, Errors: map[string]string{},
		Notice: userNotice(r.URL.Query().Get("done"))}
	for _, a := range auth.Axes() {
		l := limits.At(a.Key)
		value := "No limit"
		if n, ok := l.Ceiling(); ok && n > 0 {
			value = strconv.FormatInt(n, 10)
		}
		v.Limits = append(v.Limits, limitRow{Label: a.Label, Value: value})
	}
	return v, nil
}

func userNotice(key string) string {
	return map[string]string{
		"created":  "Account created.",
		"password": "Password reset. Their sessions have been signed out.",
		"admin":    "Saved.",
		"disabled": "Saved.",
	}[key]
}

func (s *Server) adminUserPage(w http.ResponseWriter, r *http.Request) error {
	v, err := s.adminUserView(r, r.PathValue("id"))
	if err != nil {
		return err
	}
	return s.page(w, http.StatusOK, "admin_user", v)
}

// userAction answers a write on the user detail page: a field mistake or a
// refusal comes back on the page itself, in words, instead of a bare error
// page, so the administrator stays where they were.
func (s *Server) userAction(w http.ResponseWriter, r *http.Request, err error, done string) error {
	id := r.PathValue("id")
	if fe, ok := fault.As(err); ok && fe.Kind != fault.NotFound {
		v, verr := s.adminUserView(r, id)
		if verr != nil {
			return verr
		}
		if fe.Field != "" {
			v.Errors[fe.Field] = fe.Message
		} else {
			v.NoticeError = fe.Message
		}
		return s.page(w, statusOf(err), "admin_user", v)
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, "/admin/users/"+id+"?done="+done, http.StatusSeeOther)
	return nil
}

func (s *Server) setUserAdmin(w http.ResponseWriter, r *http.Request) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	err := s.auth.SetAdmin(r.Context(), currentUser(r).ID, r.PathValue("id"), r.PostFormValue("admin") == "true")
	return s.userAction(w, r, err, "admin")
}

func (s *Server) setUserDisabled(w http.ResponseWriter, r *http.Request) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	err := s.auth.SetDisabled(r.Context(), currentUser(r).ID, r.PathValue("id"), r.PostFormValue("disabled") == "true")
	return s.userAction(w, r, err, "disabled")
}

func (s *Server) resetUserPassword(w http.ResponseWriter, r *http.Request) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	err := s.auth.ResetPassword(r.Context(), r.PathValue("id"), r.PostFormValue("password"))
	return s.userAction(w, r, err, "password")
}

func (s *Server) deleteUser(w http.ResponseWriter, r *http.Request) error {
	err := s.auth.DeleteUser(r.Context(), currentUser(r).ID, r.PathValue("id"))
	if err != nil {
		return s.userAction(w, r, err, "")
	}
	http.Redirect(w, r, "/admin/users", http.StatusSeeOther)
	return nil
}

// ---- groups ----

type adminGroupsView struct {
	Layout
	Groups      []auth.Group
	Permissions []auth.Permission
	Baseline    auth.Set
	Errors      map[string]string
	Notice      string
	FormName    string
	FormDesc    string
}

func (s *Server) adminGroupsView(r *http.Request) (adminGroupsView, error) {
	groups, err := s.auth.ListGroups(r.Context())
	if err != nil {
		return adminGroupsView{}, err
	}
	return adminGroupsView{Layout: s.layout(r, "Groups"), Groups: groups, Permissions: auth.Permissions(),
		Baseline: s.auth.Baseline(), Errors: map[string]string{}, Notice: noticeText(r.URL.Query().Get("done"))}, nil
}

func (s *Server) adminGroupsPage(w http.ResponseWriter, r *http.Request) error {
	v, err := s.adminGroupsView(r)
	if err != nil {
		return err
	}
	return s.page(w, http.StatusOK, "admin_groups", v)
}

func (s *Server) createGroup(w http.ResponseWriter, r *http.Request) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	name, desc := r.PostFormValue("name"), r.PostFormValue("description")
	g, err := s.auth.CreateGroup(r.Context(), name, desc)
	if fe, ok := fault.As(err); ok && fe.Field != "" {
		v, verr := s.adminGroupsView(r)
		if verr != nil {
			return verr
		}
		v.Errors[fe.Field], v.FormName, v.FormDesc = fe.Message, name, desc
		return s.page(w, statusOf(err), "admin_groups", v)
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, "/admin/groups/"+g.ID+"?done=created", http.StatusSeeOther)
	return nil
}

// saveBaseline stores what every account may do.
func (s *Server) saveBaseline(w http.ResponseWriter, r *http.Request) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	if err := s.auth.SetBaseline(r.Context(), r.PostForm["permissions"]); err != nil {
		return err
	}
	http.Redirect(w, r, "/admin/groups?done=saved", http.StatusSeeOther)
	return nil
}

// groupFields feeds the "group-fields" partial.
type groupFields struct {
	Name, Description string
	Errors            map[string]string
}

// GroupFields is the new-group form's name and description.
func (v adminGroupsView) GroupFields() groupFields {
	return groupFields{Name: v.FormName, Description: v.FormDesc, Errors: v.Errors}
}

// GroupFields is the group's name and description as the form shows them.
func (v adminGroupView) GroupFields() groupFields {
	return groupFields{Name: v.Group.Name, Description: v.Group.Description, Errors: v.Errors}
}

type adminGroupView struct {
	Layout
	Group       auth.Group
	Members     []auth.User
	Permissions []auth.Permission
	Granted     map[string]bool
	Axes        []limitField
	Errors      map[string]string
	Notice      string
	AddUsername string
}

// limitField is one quota axis on the group form: empty is "no opinion",
// 0 is "no limit".
type limitField struct {
	Key, Label, Description string
	Value                   string
}

func (s *Server) adminGroupView(r *http.Request, id string) (adminGroupView, error) {
	ctx := r.Context()
	g, err := s.auth.GroupByID(ctx, id)
	if err != nil {
		return adminGroupView{}, err
	}
	members, err := s.auth.Members(ctx, id)
	if err != nil {
		return adminGroupView{}, err
	}
	v := adminGroupView{Layout: s.layout(r, g.Name), Group: g, Members: members, Permissions: auth.Permissions(),
		Granted: map[string]bool{}, Errors: map[string]string{}, Notice: groupNotice(r.URL.Query().Get("done"))}
	for _, k := range g.Grants {
		v.Granted[k] = true
	}
	for _, a := range auth.Axes() {
		f := limitField{Key: a.Key, Label: a.Label, Description: a.Description}
		if n, ok := g.Limits.At(a.Key).Ceiling(); ok {
			f.Value = strconv.FormatInt(n, 10)
		}
		v.Axes = append(v.Axes, f)
	}
	return v, nil
}

func groupNotice(key string) string {
	return map[string]string{
		"created": "Group created. Add members and choose what it grants.",
		"saved":   "Saved.",
		"member":  "Members updated.",
	}[key]
}

func (s *Server) adminGroupPage(w http.ResponseWriter, r *http.Request) error {
	v, err := s.adminGroupView(r, r.PathValue("id"))
	if err != nil {
		return err
	}
	return s.page(w, http.StatusOK, "admin_group", v)
}

// groupAction mirrors userAction for the group detail page. keep, when
// set, carries submitted values back onto the page after a mistake.
func (s *Server) groupAction(w http.ResponseWriter, r *http.Request, err error, done string, keep func(*adminGroupView)) error {
	id := r.PathValue("id")
	if fe, ok := fault.As(err); ok && fe.Kind != fault.NotFound {
		v, verr := s.adminGroupView(r, id)
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
		return s.page(w, statusOf(err), "admin_group", v)
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, "/admin/groups/"+id+"?done="+done, http.StatusSeeOther)
	return nil
}

func (s *Server) saveGroup(w http.ResponseWriter, r *http.Request) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	name, desc := r.PostFormValue("name"), r.PostFormValue("description")
	err := s.auth.UpdateGroup(r.Context(), r.PathValue("id"), name, desc)
	return s.groupAction(w, r, err, "saved", func(v *adminGroupView) { v.Group.Name, v.Group.Description = name, desc })
}

func (s *Server) saveGroupPermissions(w http.ResponseWriter, r *http.Request) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	err := s.auth.SetGroupGrants(r.Context(), r.PathValue("id"), r.PostForm["permissions"])
	return s.groupAction(w, r, err, "saved", nil)
}

func (s *Server) saveGroupLimits(w http.ResponseWriter, r *http.Request) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	var limits auth.Limits
	for _, a := range auth.Axes() {
		l, err := auth.ParseLimit(a.Key, r.PostFormValue(a.Key))
		if err != nil {
			return s.groupAction(w, r, err, "", func(v *adminGroupView) {
				for i := range v.Axes {
					v.Axes[i].Value = r.PostFormValue(v.Axes[i].Key)
				}
			})
		}
		*limits.At(a.Key) = l
	}
	err := s.auth.SetGroupLimits(r.Context(), r.PathValue("id"), limits)
	return s.groupAction(w, r, err, "saved", nil)
}

func (s *Server) addGroupMember(w http.ResponseWriter, r *http.Request) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	name := strings.TrimSpace(r.PostFormValue("username"))
	users, _, err := s.auth.ListUsers(r.Context(), name, auth.MaxUserPage, 0)
	if err != nil {
		return err
	}
	var found *auth.User
	for i := range users {
		if strings.EqualFold(users[i].Username, name) {
			found = &users[i]
		}
	}
	if found == nil {
		return s.groupAction(w, r, fault.Field("username", fmt.Sprintf("There is no account named %q.", name)), "",
			func(v *adminGroupView) { v.AddUsername = name })
	}
	err = s.auth.AddMember(r.Context(), r.PathValue("id"), found.ID)
	return s.groupAction(w, r, err, "member", nil)
}

func (s *Server) removeGroupMember(w http.ResponseWriter, r *http.Request) error {
	err := s.auth.RemoveMember(r.Context(), r.PathValue("id"), r.PathValue("userID"))
	return s.groupAction(w, r, err, "member", nil)
}

func (s *Server) deleteGroup(w http.ResponseWriter, r *http.Request) error {
	if err := s.auth.DeleteGroup(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	http.Redirect(w, r, "/admin/groups?done=saved", http.StatusSeeOther)
	return nil
}
