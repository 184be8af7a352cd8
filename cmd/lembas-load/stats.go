package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// t0 is the run's origin; every timestamp is a monotonic offset from it.
var t0 = time.Now()

func since() time.Duration { return time.Since(t0) }

// quantile of sorted values, nearest rank; 0 for none.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// dist summarises durations.
type dist struct {
	n                       int
	p50, p90, p99, p999, mx time.Duration
}

func distOf(v []time.Duration) dist {
	s := slices.Clone(v)
	slices.Sort(s)
	d := dist{n: len(s), p50: quantile(s, 0.5), p90: quantile(s, 0.9), p99: quantile(s, 0.99), p999: quantile(s, 0.999)}
	if len(s) > 0 {
		d.mx = s[len(s)-1]
	}
	return d
}

func msStr(d time.Duration) string {
	f := float64(d) / float64(time.Millisecond)
	switch {
	case f < 10:
		return strconv.FormatFloat(f, 'f', 2, 64) + " ms"
	case f < 100:
		return strconv.FormatFloat(f, 'f', 1, 64) + " ms"
	}
	return strconv.FormatFloat(f, 'f', 0, 64) + " ms"
}

// cpuTime is the process's user and system CPU so far.
func cpuTime() (user, sys time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

// rss is the process's resident memory now, from /proc/self/status.
func rss() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if f := bytes.Fields(sc.Bytes()); len(f) >= 2 && string(f[0]) == "VmRSS:" {
			kb, _ := strconv.ParseInt(string(f[1]), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// sampler watches resident memory and goroutines while a phase runs.
type sampler struct {
	stop chan struct{}
	done chan struct{}

	mu             sync.Mutex
	peakRSS        int64
	peakGoroutines int
}

func startSampler(every time.Duration) *sampler {
	s := &sampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			s.sample()
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *sampler) sample() {
	r, g := rss(), runtime.NumGoroutine()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.peakRSS = max(s.peakRSS, r)
	s.peakGoroutines = max(s.peakGoroutines, g)
}

func (s *sampler) end() (peakRSS int64, peakGoroutines int) {
	close(s.stop)
	<-s.done
	s.sample()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peakRSS, s.peakGoroutines
}

// raiseNoFile lifts the open-files limit to what want connections need,
// up to the hard limit (and past it when the process may). It returns a
// sentence for the report.
func raiseNoFile(want uint64) string {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return "open files: cannot read the limit: " + err.Error()
	}
	if lim.Cur >= want {
		return fmt.Sprintf("open files: limit %d, %d needed", lim.Cur, want)
	}
	was := lim.Cur
	next := lim
	next.Cur = min(max(want, lim.Cur), lim.Max)
	if want > lim.Max {
		next.Cur, next.Max = want, want
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &next); err != nil {
		next = lim
		next.Cur = lim.Max
		if err2 := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &next); err2 != nil {
			return fmt.Sprintf("open files: CANNOT RAISE the limit from %d (%v); %d needed", was, err2, want)
		}
		return fmt.Sprintf("open files: raised %d → %d, short of the %d needed (%v)", was, next.Cur, want, err)
	}
	return fmt.Sprintf("open files: raised %d → %d", was, next.Cur)
}

// machineBusy is the CPU time every process on the machine has used, from
// /proc/stat (user, nice, system, irq, softirq, steal).
func machineBusy() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := bytes.Fields(line)
	if len(f) < 9 || string(f[0]) != "cpu" {
		return 0
	}
	var ticks int64
	for _, i := range []int{1, 2, 3, 6, 7, 8} {
		n, _ := strconv.ParseInt(string(f[i]), 10, 64)
		ticks += n
	}
	return time.Duration(ticks) * time.Second / 100 // USER_HZ
}
