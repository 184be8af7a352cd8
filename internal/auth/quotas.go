package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"lembas/internal/fault"
)

// Quota axes. Five, because they fail differently, and a single budget
// would need an exchange rate between a token and a minute of somebody's
// GPU.
const (
	AxisMonthlyTokens     = "monthly_tokens"
	AxisConcurrentReplies = "concurrent_replies"
	AxisAgentSeconds      = "agent_seconds"
	AxisImagesPerDay      = "images_per_day"
	AxisHelpersPerReply   = "helpers_per_reply"
)

// Axis describes one quota axis for the pages that edit limits.
type Axis struct {
	Key         string
	Label       string
	Description string // one sentence
}

// axes lists the quota axes in the order pages show them; it also drives
// the stored JSON, so an axis is added here and in Limits, nowhere else.
var axes = []Axis{
	{AxisMonthlyTokens, "Tokens per month",
		"Prompt and completion tokens across every reply in a calendar month, counted in UTC."},
	{AxisConcurrentReplies, "Replies at once",
		"How many replies may be written for the person at the same time."},
	{AxisAgentSeconds, "Agent seconds per reply",
		"How long an agent may work on one reply."},
	{AxisImagesPerDay, "Images per day",
		"Images generated in a day, counted in UTC."},
	{AxisHelpersPerReply, "Helpers per reply",
		"Helper agents one reply may start."},
}

// Axes returns the quota axes in order.
func Axes() []Axis { return slices.Clone(axes) }

// Limit is one axis as somebody stated it. Unset means no opinion, which
// is not the same as zero: a group that says nothing about tokens must not
// make anybody unlimited, and one that says 0 means "stop limiting this
// person". A positive Value is a ceiling.
type Limit struct {
	Value int64
	Set   bool
}

// Cap returns a stated limit: 0 for no limit, a positive n for a ceiling.
// A negative n states nothing and returns an unset Limit.
func Cap(n int64) Limit {
	if n < 0 {
		return Limit{}
	}
	return Limit{Value: n, Set: true}
}

// Ceiling returns the limit's ceiling, and false when there is none
// (unset, or zero).
func (l Limit) Ceiling() (int64, bool) {
	if !l.Set || l.Value <= 0 {
		return 0, false
	}
	return l.Value, true
}

// Allows reports whether one more is within the limit when used have
// already been spent.
func (l Limit) Allows(used int64) bool {
	c, ok := l.Ceiling()
	return !ok || used < c
}

// String is the limit as a form shows it: "" when unset, else the number.
func (l Limit) String() string {
	if !l.Set {
		return ""
	}
	return strconv.FormatInt(l.Value, 10)
}

// ParseLimit reads a limit typed into the form field named field: empty is
// no opinion, 0 is no limit, a positive whole number is a ceiling.
func ParseLimit(field, text string) (Limit, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return Limit{}, nil
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil || n < 0 {
		return Limit{}, fault.Field(field, "Enter a whole number: 0 for no limit, or leave it empty for no opinion.")
	}
	return Cap(n), nil
}

// Limits holds one value per quota axis. As a group's limits, an unset
// axis is no opinion; as resolved by ResolveLimits, every axis is set and 0
// means no limit.
type Limits struct {
	MonthlyTokens     Limit
	ConcurrentReplies Limit
	AgentSeconds      Limit
	ImagesPerDay      Limit
	HelpersPerReply   Limit
}

// At returns the axis named key, or nil for a key that is no axis.
func (l *Limits) At(key string) *Limit {
	switch key {
	case AxisMonthlyTokens:
		return &l.MonthlyTokens
	case AxisConcurrentReplies:
		return &l.ConcurrentReplies
	case AxisAgentSeconds:
		return &l.AgentSeconds
	case AxisImagesPerDay:
		return &l.ImagesPerDay
	case AxisHelpersPerReply:
		return &l.HelpersPerReply
	}
	return nil
}

// ResolveLimits combines the limits of a person's groups. Per axis:
//
//  1. the maximum across groups wins: a second group only ever grants more;
//  2. a group that does not state the axis contributes nothing;
//  3. a group stating 0 (no limit) wins outright — a plain maximum would let
//     a group saying "a million" beat one saying "unlimited".
//
// Administrators are unlimited, as they hold every permission, and so is
// anybody on an axis none of their groups states. Every axis of the result
// is set; 0 means no limit.
func ResolveLimits(groups []Limits, isAdmin bool) Limits {
	var out Limits
	for _, a := range axes {
		dst := out.At(a.Key)
		*dst = Cap(0)
		if isAdmin {
			continue
		}
		var best Limit
		for i := range groups {
			l := *groups[i].At(a.Key)
			if !l.Set || l.Value < 0 {
				continue
			}
			if l.Value == 0 {
				best = Cap(0)
				break
			}
			if !best.Set || l.Value > best.Value {
				best = l
			}
		}
		if best.Set {
			*dst = best
		}
	}
	return out
}

// Narrower combines two ceilings on the same axis, such as a person's
// resolved limit and the instance's own: the lower ceiling wins, and a side
// with no ceiling (unset or 0) has no opinion. It is not min, under which a
// zero on either side would turn "no opinion" into "nothing at all".
func Narrower(a, b Limit) Limit {
	ca, okA := a.Ceiling()
	cb, okB := b.Ceiling()
	switch {
	case !okA:
		return b
	case !okB:
		return a
	default:
		return Cap(min(ca, cb))
	}
}

// encodeLimits is the stored form of a group's limits: a JSON object with a
// key for every set axis and none for the rest.
func encodeLimits(l Limits) string {
	m := map[string]int64{}
	for _, a := range axes {
		if v := *l.At(a.Key); v.Set {
			m[a.Key] = v.Value
		}
	}
	b, _ := json.Marshal(m) // a map of numbers always encodes
	return string(b)
}

// decodeLimits reads a group's stored limits. Keys that are no axis are
// ignored; a negative number reads as unset, since no form can write one.
func decodeLimits(raw string) (Limits, error) {
	var m map[string]json.Number
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return Limits{}, fmt.Errorf("limits %q: %w", raw, err)
	}
	var l Limits
	for _, a := range axes {
		num, ok := m[a.Key]
		if !ok {
			continue
		}
		n, err := num.Int64()
		if err != nil {
			return Limits{}, fmt.Errorf("limits %q: %s: %w", raw, a.Key, err)
		}
		*l.At(a.Key) = Cap(n)
	}
	return l, nil
}

// LimitsFor resolves user's quotas from their groups.
func (s *Service) LimitsFor(ctx context.Context, user User) (Limits, error) {
	if user.IsAdmin {
		return ResolveLimits(nil, true), nil
	}
	rows, err := s.db.R.QueryContext(ctx,
		`SELECT g.id, g.limits FROM groups g
		 JOIN group_members m ON m.group_id = g.id
		 WHERE m.user_id = ?`, user.ID)
	if err != nil {
		return Limits{}, fmt.Errorf("auth: limits of %s: %w", user.ID, err)
	}
	defer rows.Close()
	var groups []Limits
	for rows.Next() {
		var id, raw string
		if err := rows.Scan(&id, &raw); err != nil {
			return Limits{}, fmt.Errorf("auth: limits of %s: %w", user.ID, err)
		}
		l, err := decodeLimits(raw)
		if err != nil {
			return Limits{}, fmt.Errorf("auth: limits of %s: group %s: %w", user.ID, id, err)
		}
		groups = append(groups, l)
	}
	if err := rows.Err(); err != nil {
		return Limits{}, fmt.Errorf("auth: limits of %s: %w", user.ID, err)
	}
	return ResolveLimits(groups, false), nil
}
