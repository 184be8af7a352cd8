// Command measure reports the foundation's figures: the stripped binary's
// size, the time from process start to the first successful /healthz
// (median of 10 starts on existing data, and of the first start on an empty
// directory), and resident memory after start with an empty database.
//
//	go run ./scripts/measure
//
// It builds the binary into a temporary directory, runs it on loopback
// only, and stops every process it starts.
package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "measure:", err)
		os.Exit(1)
	}
}

func run() error {
	tmp, err := os.MkdirTemp("", "lembas-measure-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "lembas")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, "./cmd/lembas")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("build: %w", err)
	}
	info, err := os.Stat(bin)
	if err != nil {
		return err
	}
	fmt.Printf("binary size (stripped, CGO_ENABLED=0): %.1f MB\n", float64(info.Size())/1e6)

	data := filepath.Join(tmp, "data")
	first, rss, err := startOnce(bin, data)
	if err != nil {
		return err
	}
	fmt.Printf("first start on an empty directory to /healthz: %v\n", first.Round(time.Millisecond))
	fmt.Printf("resident memory after start, empty database: %.1f MB\n", float64(rss)/1e6)

	var times []time.Duration
	var rsses []int64
	for range 10 {
		d, rss, err := startOnce(bin, data)
		if err != nil {
			return err
		}
		times = append(times, d)
		rsses = append(rsses, rss)
	}
	slices.Sort(times)
	slices.Sort(rsses)
	fmt.Printf("start to first /healthz on existing data, median of 10: %v (min %v, max %v)\n",
		((times[4] + times[5]) / 2).Round(time.Millisecond), times[0].Round(time.Millisecond), times[9].Round(time.Millisecond))
	fmt.Printf("resident memory after start, median of 10: %.1f MB\n", float64(rsses[5])/1e6)
	return nil
}

// startOnce starts the binary, polls /healthz until it answers 200, reads
// its resident memory, and stops it.
func startOnce(bin, data string) (time.Duration, int64, error) {
	port, err := freePort()
	if err != nil {
		return 0, 0, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(), "LEMBAS_ADDR="+addr, "LEMBAS_DATA_DIR="+data, "LEMBAS_LOG_LEVEL=error")
	client := &http.Client{Timeout: time.Second}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	var took time.Duration
	for {
		res, err := client.Get("http://" + addr + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				took = time.Since(start)
				break
			}
		}
		if time.Since(start) > 10*time.Second {
			return 0, 0, errors.New("no healthy answer within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
	// Let the start settle before reading memory.
	time.Sleep(300 * time.Millisecond)
	rss, err := residentBytes(cmd.Process.Pid)
	return took, rss, err
}

func residentBytes(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, errors.New("no VmRSS")
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
