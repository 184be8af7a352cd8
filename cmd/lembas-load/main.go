// Command lembas-load measures the reply engine under load: a real
// LLeMbas (built by internal/app, as `lembas serve` builds it, on a
// temporary data directory) against the scripted fake upstream
// (internal/llm/llmtest), all on 127.0.0.1, all in this one process.
//
//	go run ./cmd/lembas-load                     # both phases, defaults
//	go run ./cmd/lembas-load -concurrency 1000 -tokens 400 -tps 20 -duration 60s
//
// Phase 1, added time to first frame. A reply's follower opens its stream;
// the fake's first token goes out -gap later. A reverse proxy in front of
// the fake stamps the moment it forwards each content delta; the figure
// is, per reply, the first `render` event arriving at the follower minus
// the first delta's stamp: everything LLeMbas adds (reading the upstream,
// the engine, rendering, the template, the SSE write) plus loopback. With
// -short-gap the same is measured for a first token that arrives soon
// after the stream opened, when the follower's 100 ms frame throttle is
// still running from the frame it sent on opening.
//
// Phase 2, concurrent streams. -concurrency replies at once, -tokens each
// at -tps, one follower each, started as fast as a ramp of browsers can
// (composer POST, chat page, stream). Every token carries its number
// ("tok17"), the proxy stamps each as it forwards it, and a follower
// reading a render event takes the highest number the frame shows: each
// token newly shown gets a delay, arrival of that frame minus the token's
// stamp. That is the end-to-end token-to-screen delay, the frame throttle
// included (the throttle alone makes it up to 100 ms by design); the
// percentiles are over tokens. "Held" means the follower received done
// with every token before -duration ran out.
//
// CPU (getrusage) and resident memory are the whole process's: LLeMbas,
// the fake, the proxy and the followers together. With -cpuprofile, the
// profile's samples carry a role label (server, upstream, proxy, client)
// so `go tool pprof -tags` splits the CPU between them.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

type options struct {
	replies     int
	parallel    int
	concurrency int
	tokens      int
	tps         float64
	duration    time.Duration
	gap         time.Duration
	shortGap    time.Duration
	ramp        int
	cpuprofile  string
	memprofile  string
	phases      string
}

func main() {
	var o options
	flag.IntVar(&o.replies, "replies", 200, "replies measured for the added time to first frame (phase 1)")
	flag.IntVar(&o.parallel, "parallel", 8, "phase 1 replies in flight at once")
	flag.IntVar(&o.concurrency, "concurrency", 1000, "replies streaming at once (phase 2)")
	flag.IntVar(&o.tokens, "tokens", 600, "tokens per reply in phase 2")
	flag.Float64Var(&o.tps, "tps", 20, "tokens per second per reply")
	flag.DurationVar(&o.duration, "duration", 60*time.Second, "time bound of each phase")
	flag.DurationVar(&o.gap, "gap", 300*time.Millisecond, "from a follower's stream opening to the upstream's first token")
	flag.DurationVar(&o.shortGap, "short-gap", 20*time.Millisecond, "phase 1b: a first token this soon after the stream opened (0 skips it)")
	flag.IntVar(&o.ramp, "ramp", 16, "phase 2 browsers starting chats at once during the ramp")
	flag.StringVar(&o.cpuprofile, "cpuprofile", "", "write a CPU profile of phase 2, samples labelled by role")
	flag.StringVar(&o.memprofile, "memprofile", "", "write a heap profile of phase 2 once every stream is open")
	flag.StringVar(&o.phases, "phases", "1,2", "phases to run: 1, 2 or 1,2")
	flag.Parse()
	// Interrupted, it stops the phase, shuts the server down and removes
	// its data directory like a finished run.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "lembas-load:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	fmt.Printf("lembas-load: %d CPUs, GOMAXPROCS %d, %s\n", runtime.NumCPU(), runtime.GOMAXPROCS(0),
		raiseNoFile(uint64(7*max(o.concurrency, o.parallel)+256)))

	var up *upstream
	var err error
	withRole("upstream", func() { up, err = startUpstream(loadModel) })
	if err != nil {
		return err
	}
	defer up.Close()
	var in *instance
	withRole("server", func() { in, err = startInstance(up.URL) })
	if err != nil {
		return err
	}
	defer func() {
		if err := in.stop(); err != nil {
			fmt.Fprintln(os.Stderr, "lembas-load: stopping the server:", err)
		}
	}()
	c, err := newClient(in, max(o.concurrency, o.parallel))
	if err != nil {
		return err
	}
	idle := rss()
	var rows []row
	if strings.Contains(o.phases, "1") {
		r, err := firstFrames(ctx, c, up, o, o.replies, o.gap, "1")
		if err != nil {
			return err
		}
		rows = append(rows, r...)
		if o.shortGap > 0 {
			r, err := firstFrames(ctx, c, up, o, max(o.replies/4, 1), o.shortGap, "1b")
			if err != nil {
				return err
			}
			rows = append(rows, r...)
		}
	}
	if strings.Contains(o.phases, "2") {
		r, err := concurrent(ctx, c, up, o, idle)
		if err != nil {
			return err
		}
		rows = append(rows, r...)
	}
	printTable(rows)
	if w, e, first := in.log.counts(); w+e > 0 {
		fmt.Printf("\nLLeMbas logged %d warnings and %d errors; the first:\n", w, e)
		for _, l := range first {
			fmt.Println("  " + l)
		}
	}
	return nil
}

// withRole runs fn with a pprof label that every goroutine it starts
// inherits, so a CPU profile can tell the parts of this process apart.
func withRole(role string, fn func()) {
	pprof.Do(context.Background(), pprof.Labels("role", role), func(context.Context) { fn() })
}

// row is one line of the report.
type row struct {
	phase, figure, measured, target, verdict string
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

// firstFrames runs n short replies, o.parallel at a time, each with its
// first token gap after the follower's stream opened.
func firstFrames(ctx context.Context, c *client, up *upstream, o options, n int, gap time.Duration, phase string) ([]row, error) {
	const tokens = 10 // only the first frame is measured
	up.fake.Default(script(tokens, o.tps))
	ctx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	outs := make([]outcome, n)
	var wg sync.WaitGroup
	next := make(chan int)
	withRole("client", func() {
		for range o.parallel {
			wg.Go(func() {
				for i := range next {
					tr := newTrace(100_000*len(phase)+i, tokens, gap)
					up.add(tr)
					outs[i] = c.follow(ctx, tr)
					up.remove(tr.id)
				}
			})
		}
	})
	start := time.Now()
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	wall := time.Since(start)

	var added []time.Duration
	failed, stale := 0, 0
	var firstErr string
	for _, out := range outs {
		switch {
		case out.stage != "" && out.renders == 0:
			failed++
			if firstErr == "" {
				firstErr = fmt.Sprintf("%s: %v", out.stage, out.err)
			}
		case out.firstContent == 0 || out.firstContent < out.opened:
			stale++ // the first token went out before the stream was open
		default:
			added = append(added, out.firstRender-out.firstContent)
		}
	}
	d := distOf(added)
	title := fmt.Sprintf("added time to first frame, first token %v after the stream opened", gap)
	measured := fmt.Sprintf("p50 %s, p90 %s, p99 %s, max %s (%d replies, %d at once, %.0f s)",
		msStr(d.p50), msStr(d.p90), msStr(d.p99), msStr(d.mx), d.n, o.parallel, wall.Seconds())
	rows := []row{{phase, title, measured, "p50 < 5 ms, p99 < 25 ms", verdict(d.n > 0 && d.p50 < 5*time.Millisecond && d.p99 < 25*time.Millisecond)}}
	if failed+stale > 0 {
		rows = append(rows, row{phase, "replies not measured", fmt.Sprintf("%d failed, %d with the first token before the stream (first failure: %s)", failed, stale, firstErr), "0", verdict(failed == 0)})
	}
	return rows, nil
}

// concurrent runs o.concurrency replies at once and follows each to the end.
func concurrent(ctx context.Context, c *client, up *upstream, o options, idleRSS int64) ([]row, error) {
	n := o.concurrency
	up.fake.Default(script(o.tokens, o.tps))
	ctx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	if o.cpuprofile != "" {
		f, err := os.Create(o.cpuprofile)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return nil, err
		}
		defer pprof.StopCPUProfile()
	}
	runtime.GC()
	before := rss()
	smp := startSampler(250 * time.Millisecond)
	u0, s0 := cpuTime()
	m0 := machineBusy()
	start := since()

	outs := make([]outcome, n)
	var followers, ramp sync.WaitGroup
	next := make(chan int)
	withRole("client", func() {
		for range o.ramp {
			ramp.Go(func() {
				for i := range next {
					tr := newTrace(i, o.tokens, o.gap)
					up.add(tr)
					followers.Add(1)
					ended := make(chan struct{})
					go func() {
						defer followers.Done()
						defer close(ended)
						defer up.remove(tr.id)
						outs[i] = c.follow(ctx, tr)
					}()
					// The next browser starts once this one has its stream
					// open (or has given up): the ramp is as fast as the
					// server lets people in.
					select {
					case <-tr.open:
					case <-ended:
					}
				}
			})
		}
	})
	rampStart := time.Now()
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	ramp.Wait()
	rampTook := time.Since(rampStart)
	if o.memprofile != "" {
		if err := writeHeapProfile(o.memprofile); err != nil {
			fmt.Fprintln(os.Stderr, "lembas-load: heap profile:", err)
		}
	}
	followers.Wait()
	wall := since() - start
	u1, s1 := cpuTime()
	m1 := machineBusy()
	peakRSS, peakG := smp.end()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)

	var delays, gaps, starts, pages, opens []time.Duration
	held, late, renders, tokens := 0, 0, 0, 0
	fails := map[string]int{}
	var firstErrs []string
	for _, out := range outs {
		if out.started > 0 {
			starts = append(starts, out.started-out.began)
		}
		if out.paged > 0 {
			pages = append(pages, out.paged-out.started)
		}
		if out.opened > 0 {
			opens = append(opens, out.opened-out.paged)
		}
		delays = append(delays, out.delays...)
		gaps = append(gaps, out.gaps...)
		late += out.late
		renders += out.renders
		tokens += len(out.delays) + out.late
		if out.held {
			held++
			continue
		}
		stage := out.stage
		if stage == "" {
			stage = "never started"
		}
		fails[stage]++
		if len(firstErrs) < 3 && out.err != nil {
			firstErrs = append(firstErrs, fmt.Sprintf("%s: %v", stage, out.err))
		}
	}
	dd, gd := distOf(delays), distOf(gaps)
	peak := peakOpen(outs)
	cpu := (u1 - u0) + (s1 - s0)
	share := cpu.Seconds() / wall.Seconds() / float64(runtime.NumCPU())
	held1 := fmt.Sprintf("%d of %d", held, n)
	if len(fails) > 0 {
		var parts []string
		for k, v := range fails {
			parts = append(parts, fmt.Sprintf("%d %s", v, k))
		}
		sort.Strings(parts)
		held1 += " (lost: " + strings.Join(parts, ", ") + ")"
	}
	p := "2"
	rows := []row{
		{p, fmt.Sprintf("replies held to the end (%d at once, %d tokens at %.0f tok/s)", n, o.tokens, o.tps), held1, fmt.Sprintf("%d held", n), verdict(held == n)},
		{p, "frame delay: token forwarded → first frame showing it", fmt.Sprintf("p50 %s, p90 %s, p99 %s, p99.9 %s, max %s (%d tokens)",
			msStr(dd.p50), msStr(dd.p90), msStr(dd.p99), msStr(dd.p999), msStr(dd.mx), dd.n), "p99 < 250 ms", verdict(dd.n > 0 && dd.p99 < 250*time.Millisecond)},
		{p, "gap between frames to one follower", fmt.Sprintf("p50 %s, p99 %s, max %s (%d frames)", msStr(gd.p50), msStr(gd.p99), msStr(gd.mx), renders), "≥ 100 ms by design", ""},
		{p, "streams open at the same moment, peak", fmt.Sprint(peak), fmt.Sprint(n), verdict(peak == n)},
		{p, "ramp: all streams open", fmt.Sprintf("%.1f s (%d browsers at once)", rampTook.Seconds(), o.ramp), "", ""},
		{p, "ramp: composer POST / chat page / stream open, p50", fmt.Sprintf("%s / %s / %s", msStr(distOf(starts).p50), msStr(distOf(pages).p50), msStr(distOf(opens).p50)), "", ""},
		{p, "ramp: composer POST / chat page / stream open, p99", fmt.Sprintf("%s / %s / %s", msStr(distOf(starts).p99), msStr(distOf(pages).p99), msStr(distOf(opens).p99)), "", ""},
		{p, "CPU, whole process (getrusage)", fmt.Sprintf("%.1f s user + %.1f s system over %.1f s = %.0f%% of %d cores; %.0f µs per token delivered",
			(u1 - u0).Seconds(), (s1 - s0).Seconds(), wall.Seconds(), 100*share, runtime.NumCPU(), float64(cpu.Microseconds())/float64(max(tokens, 1))), "", ""},
		{p, "CPU used meanwhile by other processes on the machine", fmt.Sprintf("%.1f s = %.0f%% of %d cores",
			max(0, (m1-m0)-cpu).Seconds(), 100*max(0, (m1-m0)-cpu).Seconds()/wall.Seconds()/float64(runtime.NumCPU()), runtime.NumCPU()), "", ""},
		{p, "resident memory, whole process", fmt.Sprintf("%.0f MB idle after start, %.0f MB before the phase, %.0f MB peak; Go heap %.0f MB at the end",
			mb(idleRSS), mb(before), mb(peakRSS), mb(int64(ms.HeapInuse))), "", ""},
		{p, "goroutines, peak", fmt.Sprint(peakG), "", ""},
	}
	if late > 0 {
		rows = append(rows, row{p, "tokens forwarded before their stream was open", fmt.Sprint(late), "0", ""})
	}
	for _, e := range firstErrs {
		rows = append(rows, row{p, "first failures", e, "", ""})
	}
	return rows, nil
}

// peakOpen is the most streams that were open at one moment.
func peakOpen(outs []outcome) int {
	type edge struct {
		at    time.Duration
		delta int
	}
	var edges []edge
	for _, o := range outs {
		if o.opened > 0 && o.ended > 0 {
			edges = append(edges, edge{o.opened, 1}, edge{o.ended, -1})
		}
	}
	// Ends before starts at the same instant: a stream that ended is not
	// counted with one that began then.
	slices.SortFunc(edges, func(a, b edge) int {
		if a.at != b.at {
			return int(a.at - b.at)
		}
		return a.delta - b.delta
	})
	open, peak := 0, 0
	for _, e := range edges {
		open += e.delta
		peak = max(peak, open)
	}
	return peak
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

func printTable(rows []row) {
	wf, wm := len("figure"), len("measured")
	for _, r := range rows {
		wf, wm = max(wf, len([]rune(r.figure))), max(wm, len([]rune(r.measured)))
	}
	wm = min(wm, 110)
	fmt.Println()
	fmt.Printf("%-5s  %-*s  %-*s  %-24s  %s\n", "phase", wf, "figure", wm, "measured", "target", "")
	fmt.Println(strings.Repeat("-", 5+2+wf+2+wm+2+24+8))
	for _, r := range rows {
		fmt.Printf("%-5s  %s  %s  %-24s  %s\n", r.phase, pad(r.figure, wf), pad(r.measured, wm), r.target, r.verdict)
	}
}

func pad(s string, w int) string {
	if n := len([]rune(s)); n < w {
		return s + strings.Repeat(" ", w-n)
	}
	return s
}
