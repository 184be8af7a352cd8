package auth

import (
	"context"
	"strings"
	"testing"

	"lembas/internal/fault"
)

// tokens is a group's Limits stating only monthly_tokens.
func tokens(l Limit) Limits { return Limits{MonthlyTokens: l} }

var absent Limit

func TestResolveLimits(t *testing.T) {
	cases := []struct {
		name   string
		groups []Limits
		admin  bool
		want   Limit // monthly_tokens of the result
	}{
		{"no groups: unlimited", nil, false, Cap(0)},
		{"one group with no opinion: unlimited", []Limits{tokens(absent)}, false, Cap(0)},
		{"one group's ceiling", []Limits{tokens(Cap(1000))}, false, Cap(1000)},
		{"absent contributes nothing", []Limits{tokens(Cap(1000)), tokens(absent)}, false, Cap(1000)},
		{"absent first contributes nothing", []Limits{tokens(absent), tokens(Cap(1000))}, false, Cap(1000)},
		{"maximum across groups", []Limits{tokens(Cap(1000)), tokens(Cap(5000)), tokens(Cap(2000))}, false, Cap(5000)},
		{"zero wins outright over a bigger number", []Limits{tokens(Cap(1_000_000)), tokens(Cap(0))}, false, Cap(0)},
		{"zero wins outright in any order", []Limits{tokens(Cap(0)), tokens(Cap(1_000_000))}, false, Cap(0)},
		{"zero wins among absents", []Limits{tokens(absent), tokens(Cap(0)), tokens(absent)}, false, Cap(0)},
		{"a negative value is no statement", []Limits{tokens(Limit{Value: -5, Set: true}), tokens(Cap(10))}, false, Cap(10)},
		{"admin with no groups", nil, true, Cap(0)},
		{"admin despite a ceiling", []Limits{tokens(Cap(10))}, true, Cap(0)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := ResolveLimits(c.groups, c.admin)
			if got.MonthlyTokens != c.want {
				t.Fatalf("monthly_tokens = %+v, want %+v", got.MonthlyTokens, c.want)
			}
			// Every axis of a resolved Limits is answered.
			for _, a := range Axes() {
				if !got.At(a.Key).Set {
					t.Errorf("%s left unset", a.Key)
				}
			}
		})
	}
}

// Axes resolve independently: one group's opinion about one axis says
// nothing about another.
func TestResolveLimitsAxesAreIndependent(t *testing.T) {
	a := Limits{MonthlyTokens: Cap(100), ConcurrentReplies: Cap(2)}
	b := Limits{ConcurrentReplies: Cap(5), AgentSeconds: Cap(0), ImagesPerDay: Cap(3)}
	got := ResolveLimits([]Limits{a, b}, false)
	want := Limits{MonthlyTokens: Cap(100), ConcurrentReplies: Cap(5), AgentSeconds: Cap(0),
		ImagesPerDay: Cap(3), HelpersPerReply: Cap(0)}
	if got != want {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

func TestNarrower(t *testing.T) {
	cases := []struct {
		name    string
		a, b    Limit
		ceiling int64 // 0: none
	}{
		{"both absent", absent, absent, 0},
		{"both zero", Cap(0), Cap(0), 0},
		{"absent and zero", absent, Cap(0), 0},
		{"zero on the left is no opinion", Cap(0), Cap(60), 60},
		{"zero on the right is no opinion", Cap(60), Cap(0), 60},
		{"absent on the left is no opinion", absent, Cap(60), 60},
		{"absent on the right is no opinion", Cap(60), absent, 60},
		{"the lower ceiling wins", Cap(30), Cap(60), 30},
		{"the lower ceiling wins either way", Cap(60), Cap(30), 30},
		{"equal", Cap(45), Cap(45), 45},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := Narrower(c.a, c.b).Ceiling()
			if c.ceiling == 0 && ok {
				t.Fatalf("ceiling %d, want none", got)
			}
			if c.ceiling != 0 && (!ok || got != c.ceiling) {
				t.Fatalf("ceiling %d %v, want %d", got, ok, c.ceiling)
			}
		})
	}
}

func TestLimitAllows(t *testing.T) {
	cases := []struct {
		l    Limit
		used int64
		want bool
	}{
		{absent, 1 << 40, true},
		{Cap(0), 1 << 40, true},
		{Cap(3), 2, true},
		{Cap(3), 3, false},
	}
	for _, c := range cases {
		if got := c.l.Allows(c.used); got != c.want {
			t.Errorf("%+v.Allows(%d) = %v", c.l, c.used, got)
		}
	}
}

func TestParseLimit(t *testing.T) {
	cases := []struct {
		in   string
		want Limit
		bad  bool
	}{
		{"", absent, false},
		{"  ", absent, false},
		{"0", Cap(0), false},
		{" 250000 ", Cap(250000), false},
		{"-1", absent, true},
		{"1.5", absent, true},
		{"lots", absent, true},
		{"99999999999999999999", absent, true},
	}
	for _, c := range cases {
		got, err := ParseLimit(AxisMonthlyTokens, c.in)
		if c.bad {
			if fe, ok := fault.As(err); !ok || fe.Field != AxisMonthlyTokens {
				t.Errorf("ParseLimit(%q) = %v, want a field error", c.in, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseLimit(%q) = %+v %v, want %+v", c.in, got, err, c.want)
		}
		if got.String() != strings.TrimSpace(c.in) {
			t.Errorf("String of %+v = %q, want what was typed", got, got.String())
		}
	}
}

func TestLimitsAreStoredAsStated(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	mustUser(t, s, "first", true)
	u := mustUser(t, s, "person", false)
	a := mustGroup(t, s, "Small", nil, u)
	b := mustGroup(t, s, "Busy", nil, u)
	if err := s.SetGroupLimits(ctx, a.ID, Limits{MonthlyTokens: Cap(1000), ConcurrentReplies: Cap(1)}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetGroupLimits(ctx, b.ID, Limits{ConcurrentReplies: Cap(0), ImagesPerDay: Cap(4)}); err != nil {
		t.Fatal(err)
	}
	var raw string
	s.db.R.QueryRow(`SELECT limits FROM groups WHERE id = ?`, a.ID).Scan(&raw)
	if raw != `{"concurrent_replies":1,"monthly_tokens":1000}` {
		t.Fatalf("stored %s: an unset axis must be absent, not 0", raw)
	}
	got, _ := s.GroupByID(ctx, b.ID)
	if got.Limits != (Limits{ConcurrentReplies: Cap(0), ImagesPerDay: Cap(4)}) {
		t.Fatalf("read back %+v", got.Limits)
	}

	l, err := s.LimitsFor(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	want := Limits{MonthlyTokens: Cap(1000), ConcurrentReplies: Cap(0), AgentSeconds: Cap(0),
		ImagesPerDay: Cap(4), HelpersPerReply: Cap(0)}
	if l != want {
		t.Fatalf("LimitsFor = %+v\nwant %+v", l, want)
	}

	// An axis the code does not know is ignored on read and gone after
	// the next write.
	s.db.W.Exec(`UPDATE groups SET limits = '{"monthly_tokens": 7, "gpu_minutes": 3}' WHERE id = ?`, a.ID)
	got, err = s.GroupByID(ctx, a.ID)
	if err != nil || got.Limits != (Limits{MonthlyTokens: Cap(7)}) {
		t.Fatalf("with an unknown axis stored: %+v %v", got.Limits, err)
	}
	s.SetGroupLimits(ctx, a.ID, got.Limits)
	s.db.R.QueryRow(`SELECT limits FROM groups WHERE id = ?`, a.ID).Scan(&raw)
	if raw != `{"monthly_tokens":7}` {
		t.Fatalf("stored %s after a write", raw)
	}

	if fe, ok := fault.As(s.SetGroupLimits(ctx, a.ID, Limits{AgentSeconds: Limit{Value: -1, Set: true}})); !ok || fe.Field != AxisAgentSeconds {
		t.Fatal("a negative limit was stored")
	}
	admin, _ := s.UserByID(ctx, mustUser(t, s, "boss", true).ID)
	s.AddMember(ctx, a.ID, admin.ID)
	if l, _ := s.LimitsFor(ctx, admin); l.MonthlyTokens != Cap(0) {
		t.Fatalf("an administrator is limited: %+v", l)
	}
}
