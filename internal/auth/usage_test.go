package auth

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"lembas/internal/fault"
)

// Fifty replies finishing at once must all be counted.
func TestConcurrentUsageLosesNoIncrement(t *testing.T) {
	s, c := newService(t)
	ctx := context.Background()
	u := mustUser(t, s, "person", false)
	const n = 50
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			s.RecordUsage(ctx, u.ID, c.Now(), 10, 5, i%10 == 0)
		}()
	}
	close(start)
	wg.Wait()
	got, err := s.UsageThisMonth(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := Usage{Period: "2026-11", PromptTokens: 10 * n, CompletionTokens: 5 * n, Replies: n, EstimatedTokens: 15 * n / 10}
	if got != want {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if got.Tokens() != 15*n || !got.Estimated() {
		t.Fatalf("tokens %d estimated %v", got.Tokens(), got.Estimated())
	}
}

// Periods are UTC months, whatever zone the time is in.
func TestUsagePeriodsAreUTCMonths(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	u := mustUser(t, s, "person", false)
	auckland := time.FixedZone("NZDT", 13*3600)
	// 1 December 10:00 in Auckland is still 30 November in UTC.
	s.RecordUsage(ctx, u.ID, time.Date(2026, 12, 1, 10, 0, 0, 0, auckland), 100, 0, false)
	s.RecordUsage(ctx, u.ID, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), 7, 3, false)
	nov, _ := s.UsageFor(ctx, u.ID, "2026-11")
	dec, _ := s.UsageFor(ctx, u.ID, "2026-12")
	if nov.PromptTokens != 100 || nov.Replies != 1 || dec.Tokens() != 10 || dec.Estimated() {
		t.Fatalf("november %+v, december %+v", nov, dec)
	}
	// No row is a true zero, not an error.
	if jan, err := s.UsageFor(ctx, u.ID, "2027-01"); err != nil || jan != (Usage{Period: "2027-01"}) {
		t.Fatalf("empty month: %+v %v", jan, err)
	}
	for _, bad := range []string{"", "2026-13", "2026-1", "26-11", "2026-11-01", "november"} {
		if _, err := s.UsageFor(ctx, u.ID, bad); fault.KindOf(err) != fault.Invalid {
			t.Errorf("UsageFor(%q): %v, want Invalid", bad, err)
		}
	}
}

// A stopped reply is still charged, and bookkeeping that fails is logged,
// never handed back to break a reply.
func TestRecordUsageNeverFailsTheCaller(t *testing.T) {
	s, c := newService(t)
	var logged bytes.Buffer
	s.log = slog.New(slog.NewTextHandler(&logged, nil))
	u := mustUser(t, s, "person", false)

	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	s.RecordUsage(stopped, u.ID, c.Now(), 3, 4, true)
	got, _ := s.UsageThisMonth(context.Background(), u.ID)
	if got.Tokens() != 7 || got.EstimatedTokens != 7 || got.Replies != 1 {
		t.Fatalf("a cancelled context lost the record: %+v", got)
	}

	s.RecordUsage(context.Background(), "no-such-user", c.Now(), 1, 1, false)
	if !strings.Contains(logged.String(), "record usage") || !strings.Contains(logged.String(), "no-such-user") {
		t.Fatalf("a failed record was not logged: %q", logged.String())
	}

	// Negative counts from a confused endpoint are not subtracted.
	s.RecordUsage(context.Background(), u.ID, c.Now(), -50, 1, false)
	got, _ = s.UsageThisMonth(context.Background(), u.ID)
	if got.PromptTokens != 3 || got.CompletionTokens != 5 {
		t.Fatalf("after negative counts: %+v", got)
	}
}
