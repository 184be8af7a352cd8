package web

import (
	"errors"
	"net/http"

	"lembas/internal/auth"
	"lembas/internal/fault"
)

// authView is the sign-in and registration form. Values come back after a
// mistake (never the password), with a message beside the field at fault.
type authView struct {
	Layout
	Mode         string // "login" or "register"
	Next         string
	Username     string
	Errors       map[string]string
	Message      string // not tied to a field
	SignupOpen   bool
	FirstAccount bool
	Line         string
}

func (s *Server) authForm(r *http.Request, mode string) (authView, error) {
	n, err := s.auth.CountUsers(r.Context())
	if err != nil {
		return authView{}, err
	}
	title := "Sign in"
	if mode == "register" {
		title = "Create an account"
	}
	line := "signin"
	if mode == "register" {
		line = "register"
	}
	return authView{
		Layout: s.layout(r, title), Mode: mode, Next: safeNext(r.FormValue("next")),
		Errors: map[string]string{}, SignupOpen: n == 0 || s.settings.General().AllowSignup,
		FirstAccount: n == 0, Line: flavourLine(line),
	}, nil
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) error {
	if currentUser(r) != nil {
		http.Redirect(w, r, safeNext(r.FormValue("next")), http.StatusSeeOther)
		return nil
	}
	v, err := s.authForm(r, "login")
	if err != nil {
		return err
	}
	if v.FirstAccount {
		// Nobody can sign in yet: the first visit is the registration.
		http.Redirect(w, r, "/auth/register", http.StatusSeeOther)
		return nil
	}
	return s.page(w, http.StatusOK, "auth", v)
}

func (s *Server) registerPage(w http.ResponseWriter, r *http.Request) error {
	if currentUser(r) != nil {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return nil
	}
	v, err := s.authForm(r, "register")
	if err != nil {
		return err
	}
	return s.page(w, http.StatusOK, "auth", v)
}

// formMistake puts err beside its field in v and renders the form again
// with the status err's kind calls for. Errors without a kind are returned
// to the wrapper.
func (s *Server) formMistake(w http.ResponseWriter, v authView, err error) error {
	fe, ok := fault.As(err)
	if !ok {
		return err
	}
	if fe.Field != "" {
		v.Errors[fe.Field] = fe.Message
	} else {
		v.Message = fe.Message
	}
	return s.page(w, statusOf(err), "auth", v)
}

func (s *Server) login(w http.ResponseWriter, r *http.Request) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	v, err := s.authForm(r, "login")
	if err != nil {
		return err
	}
	v.Username = r.PostFormValue("username")
	u, err := s.auth.Authenticate(r.Context(), v.Username, r.PostFormValue("password"), clientAddr(r))
	if err != nil {
		return s.formMistake(w, v, err)
	}
	return s.signIn(w, r, u, v.Next)
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	v, err := s.authForm(r, "register")
	if err != nil {
		return err
	}
	v.Username = r.PostFormValue("username")
	pw := r.PostFormValue("password")
	if pw != r.PostFormValue("password_confirm") {
		return s.formMistake(w, v, fault.Field("password_confirm", "The two passwords do not match."))
	}
	u, err := s.auth.Register(r.Context(), v.Username, pw, s.settings.General().AllowSignup)
	if err != nil {
		return s.formMistake(w, v, err)
	}
	s.log.Info("account registered", "user", u.ID, "admin", u.IsAdmin)
	return s.signIn(w, r, u, v.Next)
}

func (s *Server) signIn(w http.ResponseWriter, r *http.Request, u auth.User, next string) error {
	token, _, err := s.auth.CreateSession(r.Context(), u.ID, r.UserAgent(), clientAddr(r))
	if err != nil {
		return err
	}
	setSessionCookie(w, r, token)
	http.Redirect(w, r, safeNext(next), http.StatusSeeOther)
	return nil
}

// logout ends this browser's session. It is public so that a stale cookie
// can always be cleared; without a session it simply redirects.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) error {
	if c, err := r.Cookie(SessionCookie); err == nil && c.Value != "" {
		if err := s.auth.DeleteSession(r.Context(), c.Value); err != nil && !errors.Is(err, auth.ErrNoSession) {
			return err
		}
	}
	if u := currentUser(r); u != nil && auth.ValidTheme(u.Theme) {
		setThemeCookie(w, r, u.Theme)
	}
	clearSessionCookie(w, r)
	http.Redirect(w, r, "/auth/login", http.StatusSeeOther)
	return nil
}

func setThemeCookie(w http.ResponseWriter, r *http.Request, theme string) {
	http.SetCookie(w, &http.Cookie{Name: themeCookie, Value: theme, Path: "/", MaxAge: 400 * 24 * 3600,
		SameSite: http.SameSiteLaxMode, Secure: isTLS(r), HttpOnly: true})
}
