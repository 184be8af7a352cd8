package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestAdministratorManagesAccounts(t *testing.T) {
	site := newSite(t)
	admin := site.browser()
	admin.register("elrond")

	// Create an account; the page says so and lists it.
	r := admin.post("/admin/users", url.Values{"username": {"estel"}, "password": {"dunedain"}})
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("create: %d %s", r.StatusCode, r.body)
	}
	detail := r.Header.Get("Location")
	if r := admin.get(detail); !strings.Contains(r.body, "Account created.") || !strings.Contains(r.body, "estel") {
		t.Fatal("detail page after create")
	}
	estel := site.browser()
	if r := estel.post("/auth/login", url.Values{"username": {"estel"}, "password": {"dunedain"}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("the new account cannot sign in: %d", r.StatusCode)
	}
	// A taken name comes back beside the field with what was typed.
	r = admin.post("/admin/users", url.Values{"username": {"ESTEL"}, "password": {"dunedain"}})
	if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, "That username is taken.") || !strings.Contains(r.body, `value="ESTEL"`) {
		t.Fatalf("duplicate: %d", r.StatusCode)
	}

	id := userID(t, site, "estel")
	// Promote, then the new admin can open admin pages.
	admin.post("/admin/users/"+id+"/admin", url.Values{"admin": {"true"}})
	if r := estel.get("/admin/users"); r.StatusCode != http.StatusOK {
		t.Fatalf("promoted account: %d", r.StatusCode)
	}
	// Disable: their session ends at once.
	admin.post("/admin/users/"+id+"/disabled", url.Values{"disabled": {"true"}})
	if r := estel.get("/"); r.StatusCode != http.StatusSeeOther {
		t.Fatal("a disabled account kept its session")
	}
	// Reset the password and enable again.
	admin.post("/admin/users/"+id+"/disabled", url.Values{"disabled": {"false"}})
	admin.post("/admin/users/"+id+"/password", url.Values{"password": {"elessar!!"}})
	if r := estel.post("/auth/login", url.Values{"username": {"estel"}, "password": {"elessar!!"}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("reset password does not work: %d", r.StatusCode)
	}
	// Search finds by part of the name.
	if r := admin.get("/admin/users?q=ste"); !strings.Contains(r.body, "/admin/users/"+id) || strings.Contains(r.body, "/admin/users/"+userID(t, site, "elrond")) {
		t.Fatal("search")
	}
	// Delete.
	if r := admin.post("/admin/users/"+id+"/delete", nil); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("delete: %d", r.StatusCode)
	}
	if r := admin.get(detail); r.StatusCode != http.StatusNotFound {
		t.Fatalf("deleted account's page: %d", r.StatusCode)
	}
}

// The last administrator cannot demote, disable or delete themselves; the
// page says why instead of failing.
func TestLastAdministratorIsKept(t *testing.T) {
	site := newSite(t)
	admin := site.browser()
	admin.register("gandalf")
	id := userID(t, site, "gandalf")
	for _, c := range []struct {
		path string
		form url.Values
	}{
		{"/admin/users/" + id + "/admin", url.Values{"admin": {"false"}}},
		{"/admin/users/" + id + "/disabled", url.Values{"disabled": {"true"}}},
		{"/admin/users/" + id + "/delete", nil},
	} {
		r := admin.post(c.path, c.form)
		if r.StatusCode != http.StatusConflict || !strings.Contains(r.body, "without an administrator") {
			t.Errorf("%s: %d", c.path, r.StatusCode)
		}
	}
	if r := admin.get("/admin/general"); r.StatusCode != http.StatusOK {
		t.Fatal("the last administrator lost access")
	}
}

func TestGroupsGrantAndExplain(t *testing.T) {
	site := newSite(t)
	admin, user, _ := site.people()
	uid := userID(t, site, "user")

	// Narrow the baseline: nobody may attach web pages.
	admin.post("/admin/permissions", url.Values{"permissions": {"chat.attachments"}})
	r := admin.get("/admin/users/" + uid)
	if !strings.Contains(r.body, "Attach web pages") {
		t.Fatal("explain table missing")
	}

	r = admin.post("/admin/groups", url.Values{"name": {"Rangers"}, "description": {"of the North"}})
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("create group: %d", r.StatusCode)
	}
	group := r.Header.Get("Location")
	group = group[:strings.Index(group, "?")]
	if r := admin.post("/admin/groups", url.Values{"name": {"rangers"}}); r.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("duplicate group name: %d", r.StatusCode)
	}
	if r := admin.post(group+"/members", url.Values{"username": {"USER"}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("add member: %d %s", r.StatusCode, r.body)
	}
	if r := admin.post(group+"/members", url.Values{"username": {"nobody"}}); r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, `There is no account named &#34;nobody&#34;`) {
		t.Fatalf("unknown member: %d", r.StatusCode)
	}
	admin.post(group+"/permissions", url.Values{"permissions": {"chat.links"}})
	ok, err := site.auth.Has(t.Context(), mustUser(t, site, uid), "chat.links")
	if err != nil || !ok {
		t.Fatalf("the group did not grant: %v %v", ok, err)
	}
	if r := admin.get("/admin/users/" + uid); !strings.Contains(r.body, "Rangers") {
		t.Fatal("explain does not name the granting group")
	}
	// Limits: a bad number comes back beside its field with what was typed.
	r = admin.post(group+"/limits", url.Values{"monthly_tokens": {"lots"}})
	if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, `value="lots"`) {
		t.Fatalf("bad limit: %d", r.StatusCode)
	}
	admin.post(group+"/limits", url.Values{"monthly_tokens": {"5000"}})
	if r := admin.get("/admin/users/" + uid); !strings.Contains(r.body, "5000") {
		t.Fatal("the user's page does not show the limit in force")
	}
	// Deleting the group takes its grant away.
	admin.post(group+"/delete", nil)
	if ok, _ := site.auth.Has(t.Context(), mustUser(t, site, uid), "chat.links"); ok {
		t.Fatal("a deleted group still grants")
	}
	if r := user.get("/admin/groups"); r.StatusCode != http.StatusForbidden {
		t.Fatal("a member reached the groups page")
	}
}
