package builds

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"wafbench/driver/internal/host"
	"wafbench/internal/atomicfile"
)

// profileInfo is the JSON file written beside a training profile
// (build/pgo/<name>.json beside <name>.profdata or <name>.pgo): what was
// profiled and how. A pgo build refuses a profile whose info names another
// engine source than its own.
type profileInfo struct {
	Engine           string           `json:"engine"`
	Profile          string           `json:"profile"` // file name beside this JSON
	ProfileSHA256    string           `json:"profile_sha256"`
	TrainedOn        string           `json:"trained_on"` // mode whose module ran the training
	Training         string           `json:"training"`   // suite
	SourceVersion    string           `json:"source_version"`
	SourceSHA256     string           `json:"source_sha256,omitempty"` // archive SHA-256 (debian-source)
	Requests         int64            `json:"requests"`
	Workloads        map[string]int64 `json:"workloads,omitempty"` // requests per workload
	FunctionsCounted int              `json:"functions_counted,omitempty"`
	FunctionsTotal   int              `json:"functions_total,omitempty"`
	GitSHA           string           `json:"git_sha,omitempty"`
	CreatedUTC       string           `json:"created_utc"`
	Seconds          float64          `json:"seconds,omitempty"` // wall time of the training loop
}

// coverage is "counted/total functions (p%)", or "" when unknown.
func (p *profileInfo) coverage() string {
	if p.FunctionsTotal == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d functions with non-zero counts (%.0f%%)", p.FunctionsCounted, p.FunctionsTotal,
		100*float64(p.FunctionsCounted)/float64(p.FunctionsTotal))
}

// profilePath is where the profile a pgo build consumes lives, relative to
// the repository root, and its info file: build/pgo/modsecurity-<version>.profdata
// (clang instrumentation profile) or build/pgo/coraza-<name>.pgo (Go CPU
// profile). Empty for builds without pgo.
func (b *Build) profilePath() (profile, info string) {
	var base string
	switch {
	case b.PGO == nil:
		return "", ""
	case b.Engine == Coraza:
		base, profile = "build/pgo/coraza-"+b.Name, "build/pgo/coraza-"+b.Name+".pgo"
	default:
		base = "build/pgo/" + b.Engine + "-" + b.Version
		profile = base + ".profdata"
	}
	return profile, base + ".json"
}

// readProfileInfo reads a profile's info file.
func readProfileInfo(path string) (*profileInfo, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var p profileInfo
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &p, nil
}

// writeProfileInfo writes a profile's info file atomically.
func writeProfileInfo(path string, p *profileInfo) error {
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(data, '\n'))
}

// errNoProfile is wrapped by CheckProfile's errors.
var errNoProfile = fmt.Errorf("no usable profile")

// checkProfile verifies the profile a pgo build consumes: it exists, its
// info file matches its contents, and it was trained on this build's engine
// source (version, archive SHA-256, instrumented build, training suite). The
// error says how to train one. It returns the reference for the manifest.
func (s *Set) checkProfile(root string, b *Build) (*profileRef, error) {
	if b.PGO == nil {
		return nil, nil
	}
	rel, infoRel := b.profilePath()
	train := "train it with 'make pgo'"
	sum, err := host.FileSHA256(filepath.Join(root, rel))
	if err != nil {
		return nil, fmt.Errorf("build %s: profile %s missing: %s: %w", b.Mode(), rel, train, errNoProfile)
	}
	info, err := readProfileInfo(filepath.Join(root, infoRel))
	if err != nil {
		return nil, fmt.Errorf("build %s: profile info %s unreadable (%v): %s: %w", b.Mode(), infoRel, err, train, errNoProfile)
	}
	if bad := profileMisfits(b, info, sum); len(bad) > 0 {
		return nil, fmt.Errorf("build %s: profile %s does not fit (%s): %s: %w", b.Mode(), rel, strings.Join(bad, "; "), train, errNoProfile)
	}
	return &profileRef{
		File: rel, SHA256: sum, Training: info.Training, TrainedOn: info.TrainedOn,
		SourceVersion: info.SourceVersion, SourceSHA256: info.SourceSHA256, GitSHA: info.GitSHA,
		CreatedUTC: info.CreatedUTC, Coverage: info.coverage(), Requests: info.Requests, Info: infoRel,
	}, nil
}
