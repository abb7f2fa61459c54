package hosts

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"wafbench/driver/envoy"
	"wafbench/driver/result"
)

// moduleInfoPrefix starts the line each WAF module logs once per filter
// config: `wafbench-module {"module":…,"engine":…,"engine_version":…,
// "build":…,"rules":…}`.
const moduleInfoPrefix = "wafbench-module "

// ReadModuleInfo returns the last module self-report in a host's log.
func ReadModuleInfo(logPath string) (*result.ModuleInfo, error) {
	f, err := os.Open(logPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseModuleInfo(f, logPath)
}

func parseModuleInfo(r io.Reader, name string) (*result.ModuleInfo, error) {
	var last string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if i := strings.Index(sc.Text(), moduleInfoPrefix); i >= 0 {
			last = sc.Text()[i+len(moduleInfoPrefix):]
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if last == "" {
		return nil, fmt.Errorf("the module logged no %q line in %s — not a wafbench module of this version?", strings.TrimSpace(moduleInfoPrefix), name)
	}
	var info result.ModuleInfo
	dec := json.NewDecoder(strings.NewReader(last))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&info); err != nil {
		return nil, fmt.Errorf("%s: module self-report %q: %v", name, last, err)
	}
	return &info, nil
}

// MappedFile is the path of the file whose base name starts with prefix in
// /proc/pid/maps: what the process really loaded.
func MappedFile(pid int, prefix string) (string, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 {
			continue
		}
		path := fields[5]
		if strings.HasPrefix(filepath.Base(path), prefix) {
			return path, nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("no %s* mapped into pid %d", prefix, pid)
}

// adminStatsTimeout bounds one read of the host's counters. A plain Envoy
// answers in milliseconds; one under callgrind (run --callgrind) runs some
// 50× slower, and on a loaded machine took over 5 s in a fresh-clone
// make test, so the bound only guards against a host that hangs.
const adminStatsTimeout = time.Minute

// ModuleCounters reads the module's counters (names without Envoy's
// "dynamicmodulescustom." prefix) from the host's counters.
func ModuleCounters(ctx context.Context, stats func(context.Context) ([]byte, error), engine string) (map[string]uint64, error) {
	sctx, cancel := context.WithTimeout(ctx, adminStatsTimeout)
	defer cancel()
	b, err := stats(sctx)
	if err != nil {
		return nil, fmt.Errorf("admin /stats: %w", err)
	}
	all, err := envoy.ParseStats(b)
	if err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	prefix := "wafbench_" + engine + "_"
	for full, v := range all {
		name := full[strings.LastIndex(full, ".")+1:]
		if strings.HasPrefix(name, prefix) && v >= 0 {
			out[name] = uint64(v)
		}
	}
	if _, ok := out[prefix+"requests"]; !ok {
		return nil, fmt.Errorf("admin /stats has no %srequests counter — the module defined no counters", prefix)
	}
	return out, nil
}
