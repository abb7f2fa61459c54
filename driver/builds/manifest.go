package builds

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"wafbench/driver/internal/host"
	"wafbench/internal/atomicfile"
)

// ManifestFile is the manifest's name inside a build directory. It is
// written last: a directory without it holds no finished build.
const ManifestFile = "manifest.json"

// manifest records what a finished build is and how it was made.
type manifest struct {
	Build           string             `json:"build"` // mode name, e.g. modsecurity@3.0.14-pgo
	Engine          string             `json:"engine"`
	EngineVersion   string             `json:"engine_version"` // as the build script found it
	Source          source             `json:"source"`
	Compiler        string             `json:"compiler"`         // the recipe's compiler
	CompilerVersion string             `json:"compiler_version"` // first line of its --version
	Flags           map[string]string  `json:"flags"`            // exact flags by name (CFLAGS, LDFLAGS, GOFLAGS…)
	LTO             string             `json:"lto,omitempty"`
	Link            string             `json:"link"`
	Tags            []string           `json:"tags,omitempty"`
	Instrument      bool               `json:"instrument,omitempty"`
	Allocator       *source            `json:"allocator,omitempty"` // private C++ allocator linked in
	Ctype           string             `json:"ctype,omitempty"`     // inline: the module's own ctype functions
	Module          string             `json:"module"`              // file name inside the build directory
	ModuleSHA256    string             `json:"module_sha256"`
	ModuleBytes     int64              `json:"module_bytes"`
	SharedLibDir    string             `json:"shared_lib_dir,omitempty"` // relative; holds the engine's shared library (nginx)
	Modfile         string             `json:"modfile,omitempty"`
	ModfileSHA256   string             `json:"modfile_sha256,omitempty"`
	Profile         *profileRef        `json:"profile,omitempty"`
	Notes           map[string]string  `json:"notes,omitempty"` // evidence from the script, e.g. profile_applied
	Steps           map[string]float64 `json:"steps_seconds,omitempty"`
	RecipeHash      string             `json:"recipe_hash"`
	GitSHA          string             `json:"git_sha,omitempty"`
	BuiltUTC        time.Time          `json:"built_utc"`
	BuildSeconds    float64            `json:"build_seconds"`
}

// profileRef names the profile a pgo build consumed.
type profileRef struct {
	File          string `json:"file"` // relative to the repository root
	SHA256        string `json:"sha256"`
	Training      string `json:"training"`                   // suite that trained it
	TrainedOn     string `json:"trained_on,omitempty"`       // mode of the instrumented build (modsecurity)
	SourceVersion string `json:"source_version"`             // engine version profiled
	SourceSHA256  string `json:"source_sha256,omitempty"`    // archive SHA-256 of the profiled source
	GitSHA        string `json:"git_sha,omitempty"`          // commit the training ran at
	CreatedUTC    string `json:"created_utc,omitempty"`      // when the profile was written
	Coverage      string `json:"coverage,omitempty"`         // functions with non-zero counts / total
	Requests      int64  `json:"requests,omitempty"`         // requests the training sent
	Info          string `json:"info_file,omitempty"`        // the profile's JSON sidecar
	Evidence      string `json:"applied_evidence,omitempty"` // copied from the script's notes
}

// ReadManifest reads dir/manifest.json.
func ReadManifest(dir string) (*manifest, error) {
	data, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return nil, err
	}
	var m manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %v", filepath.Join(dir, ManifestFile), err)
	}
	return &m, nil
}

// writeManifest writes dir/manifest.json atomically (temporary file, then
// rename), so a reader sees either no manifest or a complete one.
func writeManifest(dir string, m *manifest) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, ManifestFile), append(data, '\n'))
}

// upToDate reports whether dir holds a finished build of recipeHash whose
// module is intact (its SHA-256 matches the manifest). The reason says why
// not.
func upToDate(dir, recipeHash string) (bool, string) {
	m, err := ReadManifest(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return false, "not built"
		}
		return false, err.Error()
	}
	if m.RecipeHash != recipeHash {
		return false, "recipe changed"
	}
	sum, err := host.FileSHA256(filepath.Join(dir, m.Module))
	if err != nil {
		return false, "module missing"
	}
	if sum != m.ModuleSHA256 {
		return false, "module changed since it was built"
	}
	if m.SharedLibDir != "" {
		if _, err := os.Stat(filepath.Join(dir, m.SharedLibDir)); err != nil {
			return false, "shared library directory missing"
		}
	}
	return true, "up to date"
}
