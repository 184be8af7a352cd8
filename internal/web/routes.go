package web

import "net/http"

// routes lists every route LLeMbas serves. Access is decided here, in one
// place, by the guard each route is wrapped in: public, user or admin.
// Fixed path segments come before {id} segments of the same prefix, and the
// standard mux prefers the more specific pattern anyway.
func (s *Server) routes(mux *http.ServeMux) {
	public := s.handle
	user := func(h handlerFunc) http.Handler { return s.requireUser(s.handle(h)) }
	admin := func(h handlerFunc) http.Handler { return s.requireAdmin(s.handle(h)) }

	// Operations and installability.
	mux.Handle("GET /healthz", public(s.healthz))
	mux.Handle("GET /manifest.webmanifest", public(s.manifest))
	mux.Handle("GET /sw.js", public(s.serviceWorker))
	mux.Handle("GET /offline", public(s.offlinePage))
	mux.Handle("GET /favicon.ico", public(s.favicon))
	mux.Handle("GET /static/{path...}", http.HandlerFunc(s.serveStatic))

	// Accounts.
	mux.Handle("GET /auth/login", public(s.loginPage))
	mux.Handle("POST /auth/login", public(s.login))
	mux.Handle("GET /auth/register", public(s.registerPage))
	mux.Handle("POST /auth/register", public(s.register))
	mux.Handle("POST /auth/logout", public(s.logout))

	// The app.
	mux.Handle("GET /{$}", user(s.homePage))

	// Preferences.
	mux.Handle("GET /settings", user(s.settingsPage))
	mux.Handle("POST /settings/theme", user(s.saveTheme))
	mux.Handle("POST /settings/password", user(s.changePassword))
	mux.Handle("POST /settings/sessions/revoke-others", user(s.revokeOtherSessions))
	mux.Handle("POST /settings/sessions/{id}/revoke", user(s.revokeSession))

	// Administration.
	mux.Handle("GET /admin", admin(s.adminIndex))
	mux.Handle("GET /admin/general", admin(s.adminGeneralPage))
	mux.Handle("POST /admin/general", admin(s.saveAdminGeneral))
}
