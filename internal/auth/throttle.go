package auth

import (
	"sync"
	"time"
)

// Throttle slows down repeated failed sign-ins, per account and per
// address. The first few failures cost nothing; after that each one doubles
// the wait before the next attempt is even checked, up to maxWait. A
// success for the account clears its count; the address keeps its own.
//
// It is in memory: a restart forgets it, which costs an attacker one
// restart's worth of guesses and costs us no table.
type Throttle struct {
	now   func() time.Time
	free  int           // failures allowed before waiting starts
	base  time.Duration // first wait
	max   time.Duration
	reset time.Duration // a key idle this long is forgotten

	mu   sync.Mutex
	keys map[string]*failures
}

type failures struct {
	count int
	last  time.Time
	until time.Time
}

// NewThrottle returns a Throttle with the production schedule: five free
// failures, then 2 s doubling to 15 minutes, forgotten after an hour.
func NewThrottle(now func() time.Time) *Throttle {
	if now == nil {
		now = time.Now
	}
	return &Throttle{now: now, free: 5, base: 2 * time.Second, max: 15 * time.Minute,
		reset: time.Hour, keys: map[string]*failures{}}
}

// Wait reports how long the caller must wait before another attempt for
// any of keys is checked; zero means go ahead.
func (t *Throttle) Wait(keys ...string) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	var wait time.Duration
	for _, k := range keys {
		f := t.keys[k]
		if f == nil {
			continue
		}
		if now.Sub(f.last) > t.reset {
			delete(t.keys, k)
			continue
		}
		if d := f.until.Sub(now); d > wait {
			wait = d
		}
	}
	return wait
}

// Fail records a failed attempt against every key.
func (t *Throttle) Fail(keys ...string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	for _, k := range keys {
		f := t.keys[k]
		if f == nil || now.Sub(f.last) > t.reset {
			f = &failures{}
			t.keys[k] = f
		}
		f.count++
		f.last = now
		if over := f.count - t.free; over > 0 {
			d := t.base << min(over-1, 20)
			if d > t.max || d <= 0 {
				d = t.max
			}
			f.until = now.Add(d)
		}
	}
	if len(t.keys) > 100_000 {
		t.forgetIdle(now)
	}
}

// Succeed clears the record for keys.
func (t *Throttle) Succeed(keys ...string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, k := range keys {
		delete(t.keys, k)
	}
}

func (t *Throttle) forgetIdle(now time.Time) {
	for k, f := range t.keys {
		if now.Sub(f.last) > t.reset {
			delete(t.keys, k)
		}
	}
}
