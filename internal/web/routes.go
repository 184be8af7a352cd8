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

	// Chats. The new-chat screen is the start page.
	mux.Handle("GET /{$}", user(s.newChatPage))
	mux.Handle("GET /chat", user(s.newChatPage))
	mux.Handle("GET /chat/{id}", user(s.chatPage))
	mux.Handle("POST /api/chats/start", user(s.startChat))
	mux.Handle("POST /api/chats/{id}/messages", user(s.sendMessage))
	mux.Handle("GET /api/chats/{id}/messages/{mid}/stream", user(s.followReply))
	mux.Handle("POST /api/chats/{id}/messages/{mid}/regenerate", user(s.regenerate))
	mux.Handle("POST /api/chats/{id}/messages/{mid}/edit", user(s.editMessage))
	mux.Handle("POST /api/chats/{id}/messages/{mid}/withdraw", user(s.withdrawMessage))
	mux.Handle("POST /api/chats/{id}/stop", user(s.stopChat))
	mux.Handle("POST /api/chats/{id}/title", user(s.renameChat))
	mux.Handle("POST /api/chats/{id}/settings", user(s.saveChatSettings))

	mux.Handle("GET /models/{id}/avatar", user(s.modelAvatar))

	// Preferences.
	mux.Handle("GET /settings", user(s.settingsPage))
	mux.Handle("POST /settings/theme", user(s.saveTheme))
	mux.Handle("POST /settings/preferences", user(s.savePreferences))
	mux.Handle("POST /settings/password", user(s.changePassword))
	mux.Handle("POST /settings/sessions/revoke-others", user(s.revokeOtherSessions))
	mux.Handle("POST /settings/sessions/{id}/revoke", user(s.revokeSession))

	// Administration.
	mux.Handle("GET /admin", admin(s.adminIndex))
	mux.Handle("GET /admin/general", admin(s.adminGeneralPage))
	mux.Handle("POST /admin/general", admin(s.saveAdminGeneral))

	mux.Handle("GET /admin/connections", admin(s.adminConnectionsPage))
	mux.Handle("POST /admin/connections", admin(s.createConnection))
	mux.Handle("GET /admin/connections/{id}", admin(s.adminConnectionPage))
	mux.Handle("POST /admin/connections/{id}", admin(s.saveConnection))
	mux.Handle("POST /admin/connections/{id}/test", admin(s.testConnection))
	mux.Handle("POST /admin/connections/{id}/discover", admin(s.discoverConnection))
	mux.Handle("POST /admin/connections/{id}/enabled", admin(s.setConnectionEnabled))
	mux.Handle("POST /admin/connections/{id}/delete", admin(s.deleteConnection))

	mux.Handle("GET /admin/models", admin(s.adminModelsPage))
	mux.Handle("POST /admin/models/bulk", admin(s.bulkModels))
	mux.Handle("POST /admin/models/reorder", admin(s.reorderModels))
	mux.Handle("GET /admin/models/{id}/edit", admin(s.adminModelPage))
	mux.Handle("POST /admin/models/{id}", admin(s.saveModel))
	mux.Handle("POST /admin/models/{id}/groups", admin(s.saveModelGroups))
	mux.Handle("POST /admin/models/{id}/avatar", admin(s.uploadModelAvatar))
	mux.Handle("POST /admin/models/{id}/avatar/delete", admin(s.deleteModelAvatar))
	mux.Handle("POST /admin/models/{id}/pin", admin(s.pinModel))
	mux.Handle("POST /admin/models/{id}/enabled", admin(s.enableModel))
	mux.Handle("POST /admin/models/{id}/hidden", admin(s.hideModel))
	mux.Handle("POST /admin/models/{id}/default", admin(s.defaultModel))
	mux.Handle("POST /admin/models/{id}/move", admin(s.moveModel))

	mux.Handle("GET /admin/users", admin(s.adminUsersPage))
	mux.Handle("POST /admin/users", admin(s.createUser))
	mux.Handle("GET /admin/users/{id}", admin(s.adminUserPage))
	mux.Handle("POST /admin/users/{id}/admin", admin(s.setUserAdmin))
	mux.Handle("POST /admin/users/{id}/disabled", admin(s.setUserDisabled))
	mux.Handle("POST /admin/users/{id}/password", admin(s.resetUserPassword))
	mux.Handle("POST /admin/users/{id}/delete", admin(s.deleteUser))

	mux.Handle("POST /admin/permissions", admin(s.saveBaseline))
	mux.Handle("GET /admin/groups", admin(s.adminGroupsPage))
	mux.Handle("POST /admin/groups", admin(s.createGroup))
	mux.Handle("GET /admin/groups/{id}", admin(s.adminGroupPage))
	mux.Handle("POST /admin/groups/{id}", admin(s.saveGroup))
	mux.Handle("POST /admin/groups/{id}/permissions", admin(s.saveGroupPermissions))
	mux.Handle("POST /admin/groups/{id}/limits", admin(s.saveGroupLimits))
	mux.Handle("POST /admin/groups/{id}/members", admin(s.addGroupMember))
	mux.Handle("POST /admin/groups/{id}/members/{userID}/remove", admin(s.removeGroupMember))
	mux.Handle("POST /admin/groups/{id}/delete", admin(s.deleteGroup))
}
