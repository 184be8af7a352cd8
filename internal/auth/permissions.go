package auth

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"lembas/internal/fault"
)

// Permission is one named switch. Permissions are a flat set of booleans:
// the instance's baseline, widened by every group a person is in.
type Permission struct {
	Key         string
	Label       string
	Description string // one sentence
	Default     bool   // the baseline's value until an administrator chooses
}

// Permission keys. Code asks about a permission by one of these constants,
// never by a string of its own.
const (
	PermChatAttachments = "chat.attachments"
	PermChatLinks       = "chat.links"
)

// registry is every permission there is, in the order pages list them.
// A feature that needs a permission adds a row here; nothing else may invent
// a key. Stored keys missing from it are ignored on read and dropped on the
// next write, so removing a row is safe.
var registry = []Permission{
	{Key: PermChatAttachments, Label: "Attach files",
		Description: "Add files and images to a message.", Default: true},
	{Key: PermChatLinks, Label: "Attach web pages",
		Description: "Add a web page to a message by its address; the server fetches it.", Default: true},
}

// Permissions returns the registry in order.
func Permissions() []Permission { return slices.Clone(registry) }

// LookupPermission returns the registered permission with key.
func LookupPermission(key string) (Permission, bool) {
	i := slices.IndexFunc(registry, func(p Permission) bool { return p.Key == key })
	if i < 0 {
		return Permission{}, false
	}
	return registry[i], true
}

// permissionDefaults is the registry as settings wants it: every key with
// its default.
func permissionDefaults() map[string]bool {
	m := make(map[string]bool, len(registry))
	for _, p := range registry {
		m[p.Key] = p.Default
	}
	return m
}

// Set is the permissions a person holds: registered keys that are on.
type Set map[string]bool

// Has reports whether key is on.
func (s Set) Has(key string) bool { return s[key] }

// Baseline returns the permissions everybody holds before any group widens
// them: the registry's defaults with the administrator's choices laid over.
func (s *Service) Baseline() Set {
	defaults := permissionDefaults()
	if s.settings == nil {
		return onlyOn(defaults)
	}
	return onlyOn(s.settings.PermissionBaseline(defaults))
}

func onlyOn(m map[string]bool) Set {
	out := Set{}
	for k, v := range m {
		if v {
			out[k] = true
		}
	}
	return out
}

// SetBaseline stores the baseline: the keys in on are switched on, every
// other registered permission off. An unregistered key is refused.
func (s *Service) SetBaseline(ctx context.Context, on []string) error {
	if s.settings == nil {
		return errors.New("auth: set baseline: no settings store")
	}
	chosen, err := grantsFromForm(on)
	if err != nil {
		return err
	}
	values := make(map[string]bool, len(registry))
	for _, p := range registry {
		values[p.Key] = slices.Contains(chosen, p.Key)
	}
	if err := s.settings.SavePermissionBaseline(ctx, permissionDefaults(), values); err != nil {
		return fmt.Errorf("auth: set baseline: %w", err)
	}
	return nil
}

// grantsFromForm checks keys submitted by a person and returns them in
// registry order without repeats. Unlike a stored key, a submitted unknown
// key is an error: somebody is sending something no page offers.
func grantsFromForm(keys []string) ([]string, error) {
	for _, k := range keys {
		if _, ok := LookupPermission(k); !ok {
			return nil, fault.Field("permissions", "That permission does not exist.")
		}
	}
	var out []string
	for _, p := range registry {
		if slices.Contains(keys, p.Key) {
			out = append(out, p.Key)
		}
	}
	return out, nil
}

// encodeGrants is the stored form of a group's grants: a JSON array of
// registered keys in registry order.
func encodeGrants(keys []string) string {
	out := []string{}
	for _, p := range registry {
		if slices.Contains(keys, p.Key) {
			out = append(out, p.Key)
		}
	}
	b, _ := json.Marshal(out) // a []string always encodes
	return string(b)
}

// decodeGrants reads a group's stored grants, keeping registered keys only.
func decodeGrants(raw string) ([]string, error) {
	var keys []string
	if err := json.Unmarshal([]byte(raw), &keys); err != nil {
		return nil, fmt.Errorf("permissions %q: %w", raw, err)
	}
	var out []string
	for _, p := range registry {
		if slices.Contains(keys, p.Key) {
			out = append(out, p.Key)
		}
	}
	return out, nil
}

// groupGrant is one group a person is in and what it grants.
type groupGrant struct {
	name string
	keys []string
}

// grantsOf reads the grants of every group userID is in.
func (s *Service) grantsOf(ctx context.Context, userID string) ([]groupGrant, error) {
	rows, err := s.db.R.QueryContext(ctx,
		`SELECT g.id, g.name, g.permissions FROM groups g
		 JOIN group_members m ON m.group_id = g.id
		 WHERE m.user_id = ?`, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []groupGrant
	for rows.Next() {
		var id, name, raw string
		if err := rows.Scan(&id, &name, &raw); err != nil {
			return nil, err
		}
		keys, err := decodeGrants(raw)
		if err != nil {
			return nil, fmt.Errorf("group %s: %w", id, err)
		}
		out = append(out, groupGrant{name: name, keys: keys})
	}
	return out, rows.Err()
}

// Resolve returns the permissions user holds. An administrator holds every
// one. Anybody else holds the baseline and whatever each of their groups
// grants; a group grants, it never denies, so "why can this person not do
// X" never needs a simulation of every group to answer.
func (s *Service) Resolve(ctx context.Context, user User) (Set, error) {
	if user.IsAdmin {
		all := Set{}
		for _, p := range registry {
			all[p.Key] = true
		}
		return all, nil
	}
	set := s.Baseline()
	groups, err := s.grantsOf(ctx, user.ID)
	if err != nil {
		return nil, fmt.Errorf("auth: permissions of %s: %w", user.ID, err)
	}
	for _, g := range groups {
		for _, k := range g.keys {
			set[k] = true
		}
	}
	return set, nil
}

// Has reports whether user holds the permission key. Asking about a key the
// registry does not have is a programming error and returns one.
func (s *Service) Has(ctx context.Context, user User, key string) (bool, error) {
	if _, ok := LookupPermission(key); !ok {
		return false, fmt.Errorf("auth: unknown permission %q", key)
	}
	if user.IsAdmin || s.Baseline().Has(key) {
		return true, nil
	}
	set, err := s.Resolve(ctx, user)
	if err != nil {
		return false, err
	}
	return set.Has(key), nil
}

// Explanation is Resolve's working for one permission, shown rather than
// thrown away: whether it is on and everything that turns it on.
type Explanation struct {
	Permission
	On       bool
	Admin    bool     // on because the person is an administrator
	Baseline bool     // on in the instance's baseline
	Groups   []string // names of the person's groups granting it, sorted
}

// Sources names what grants the permission: "admin", "baseline" and the
// granting groups' names, in that order. Empty means it is off.
func (e Explanation) Sources() []string {
	var out []string
	if e.Admin {
		out = append(out, "admin")
	}
	if e.Baseline {
		out = append(out, "baseline")
	}
	return append(out, e.Groups...)
}

// Explain returns, for every registered permission in registry order,
// whether user holds it and why. An administrator's permissions also list
// the baseline and groups, which is what would remain without the role.
func (s *Service) Explain(ctx context.Context, user User) ([]Explanation, error) {
	baseline := s.Baseline()
	groups, err := s.grantsOf(ctx, user.ID)
	if err != nil {
		return nil, fmt.Errorf("auth: explain permissions of %s: %w", user.ID, err)
	}
	out := make([]Explanation, 0, len(registry))
	for _, p := range registry {
		e := Explanation{Permission: p, Admin: user.IsAdmin, Baseline: baseline.Has(p.Key)}
		for _, g := range groups {
			if slices.Contains(g.keys, p.Key) {
				e.Groups = append(e.Groups, g.name)
			}
		}
		slices.SortFunc(e.Groups, func(a, b string) int {
			return cmp.Or(cmp.Compare(strings.ToLower(a), strings.ToLower(b)), cmp.Compare(a, b))
		})
		e.On = e.Admin || e.Baseline || len(e.Groups) > 0
		out = append(out, e)
	}
	return out, nil
}
