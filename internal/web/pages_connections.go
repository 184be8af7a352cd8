package web

import (
	"fmt"
	"net/http"
	"time"

	"lembas/internal/catalog"
	"lembas/internal/fault"
)

// adminConnectionsView lists connections, with the form for a new one.
type adminConnectionsView struct {
	Layout
	Connections []catalog.Connection
	Conn        catalog.Connection // none: the form makes a new one
	Form        catalog.ConnectionForm
	Errors      map[string]string
	Notice      string
}

func (s *Server) adminConnectionsView(r *http.Request) (adminConnectionsView, error) {
	conns, err := s.catalog.ListConnections(r.Context())
	if err != nil {
		return adminConnectionsView{}, err
	}
	return adminConnectionsView{Layout: s.layout(r, "Connections"), Connections: conns,
		Form: catalog.ConnectionForm{Timeout: "10"}, Errors: map[string]string{},
		Notice: noticeText(r.URL.Query().Get("done"))}, nil
}

func (s *Server) adminConnectionsPage(w http.ResponseWriter, r *http.Request) error {
	v, err := s.adminConnectionsView(r)
	if err != nil {
		return err
	}
	return s.page(w, http.StatusOK, "admin_connections", v)
}

func (s *Server) createConnection(w http.ResponseWriter, r *http.Request) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	f := catalog.ParseConnectionForm(r.PostForm)
	c, err := s.catalog.CreateConnection(r.Context(), f)
	if fe, ok := fault.As(err); ok && fe.Field != "" {
		v, verr := s.adminConnectionsView(r)
		if verr != nil {
			return verr
		}
		f.APIKey = "" // a key is never sent back to the browser, typed or stored
		v.Form, v.Errors[fe.Field] = f, fe.Message
		return s.page(w, statusOf(err), "admin_connections", v)
	}
	if err != nil {
		return err
	}
	// A new connection is put to use at once: list its models.
	res, err := s.catalog.Discover(r.Context(), c.ID)
	if err != nil {
		return err
	}
	http.Redirect(w, r, "/admin/connections/"+c.ID+"?"+discoverQuery(res), http.StatusSeeOther)
	return nil
}

// adminConnectionView is one connection's page: its form, its status and
// the Test and Discover buttons.
type adminConnectionView struct {
	Layout
	Conn   catalog.Connection
	Form   catalog.ConnectionForm
	Status connectionStatus
	Errors map[string]string
	Notice string
}

// connectionStatus is the line under a connection saying how it answered
// last. It is also the fragment the Test and Discover buttons swap in.
type connectionStatus struct {
	ConnID   string
	State    string // "ok", "error" or ""
	Message  string
	Checked  time.Time
	Duration time.Duration
}

func statusOfConnection(c catalog.Connection) connectionStatus {
	st := connectionStatus{ConnID: c.ID, State: c.LastStatus, Checked: c.LastCheckedAt, Duration: c.LastDuration}
	switch c.LastStatus {
	case "ok":
		st.Message = fmt.Sprintf("Answered in %s.", roundDuration(c.LastDuration))
	case "error":
		st.Message = c.LastError
	default:
		st.Message = "Not checked yet."
	}
	return st
}

func roundDuration(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

func (s *Server) adminConnectionView(r *http.Request, id string) (adminConnectionView, error) {
	c, err := s.catalog.GetConnection(r.Context(), id)
	if err != nil {
		return adminConnectionView{}, err
	}
	v := adminConnectionView{Layout: s.layout(r, c.Name), Conn: c, Status: statusOfConnection(c), Errors: map[string]string{},
		Form: catalog.ConnectionForm{Name: c.Name, BaseURL: c.BaseURL, Headers: c.HeadersText(),
			Timeout: fmt.Sprint(int(c.Timeout / time.Second))}}
	v.Notice = connectionNotice(r)
	return v, nil
}

// connectionNotice reads the outcome a redirect carried. Counts are
// numbers only, so a link cannot put words on the page.
func connectionNotice(r *http.Request) string {
	q := r.URL.Query()
	switch q.Get("done") {
	case "saved":
		return "Saved."
	case "tested":
		return "Test finished; see the status below."
	case "discovered":
		var added, updated, missing int
		fmt.Sscan(q.Get("added"), &added)
		fmt.Sscan(q.Get("updated"), &updated)
		fmt.Sscan(q.Get("missing"), &missing)
		return fmt.Sprintf("Models listed: %d new, %d updated, %d no longer offered.", added, updated, missing)
	case "failed":
		return "The server did not list its models; see the status below."
	}
	return ""
}

func discoverQuery(res catalog.DiscoverResult) string {
	if res.Err != nil {
		return "done=failed"
	}
	return fmt.Sprintf("done=discovered&added=%d&updated=%d&missing=%d", res.Added, res.Updated, res.Missing)
}

func (s *Server) adminConnectionPage(w http.ResponseWriter, r *http.Request) error {
	v, err := s.adminConnectionView(r, r.PathValue("id"))
	if err != nil {
		return err
	}
	return s.page(w, http.StatusOK, "admin_connection", v)
}

func (s *Server) saveConnection(w http.ResponseWriter, r *http.Request) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	id := r.PathValue("id")
	f := catalog.ParseConnectionForm(r.PostForm)
	_, err := s.catalog.UpdateConnection(r.Context(), id, f)
	if fe, ok := fault.As(err); ok && fe.Field != "" {
		v, verr := s.adminConnectionView(r, id)
		if verr != nil {
			return verr
		}
		f.APIKey = ""
		v.Form, v.Errors[fe.Field] = f, fe.Message
		return s.page(w, statusOf(err), "admin_connection", v)
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, "/admin/connections/"+id+"?done=saved", http.StatusSeeOther)
	return nil
}

// testConnection lists the connection's models without storing them and
// reports how it went. htmx swaps the status line; a plain form returns to
// the page.
func (s *Server) testConnection(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if _, err := s.catalog.Test(r.Context(), id); err != nil {
		return err
	}
	return s.connectionOutcome(w, r, id, "done=tested", "")
}

func (s *Server) discoverConnection(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	res, err := s.catalog.Discover(r.Context(), id)
	if err != nil {
		return err
	}
	summary := ""
	if res.Err == nil {
		summary = fmt.Sprintf("Models listed: %d new, %d updated, %d no longer offered.", res.Added, res.Updated, res.Missing)
	}
	return s.connectionOutcome(w, r, id, discoverQuery(res), summary)
}

// connectionOutcome answers Test and Discover: the status fragment for
// htmx (summary first, when there is one), a redirect for a plain form.
func (s *Server) connectionOutcome(w http.ResponseWriter, r *http.Request, id, query, summary string) error {
	if !isHTMX(r) {
		http.Redirect(w, r, "/admin/connections/"+id+"?"+query, http.StatusSeeOther)
		return nil
	}
	c, err := s.catalog.GetConnection(r.Context(), id)
	if err != nil {
		return err
	}
	st := statusOfConnection(c)
	if summary != "" {
		st.Message = summary + " " + st.Message
	}
	return s.fragment(w, http.StatusOK, "connection_status", st)
}

func (s *Server) setConnectionEnabled(w http.ResponseWriter, r *http.Request) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	id := r.PathValue("id")
	if err := s.catalog.SetConnectionEnabled(r.Context(), id, r.PostFormValue("enabled") == "true"); err != nil {
		return err
	}
	http.Redirect(w, r, "/admin/connections/"+id+"?done=saved", http.StatusSeeOther)
	return nil
}

func (s *Server) deleteConnection(w http.ResponseWriter, r *http.Request) error {
	if err := s.catalog.DeleteConnection(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	http.Redirect(w, r, "/admin/connections?done=saved", http.StatusSeeOther)
	return nil
}
