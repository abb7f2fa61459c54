package builds

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wafbench/driver/internal/host"
)

// TestImportProfiles: a profile that fits its pgo build of the repository's
// builds.yaml is installed into build/pgo/; one trained on another engine
// source version, or whose contents are not the file its info describes,
// refuses the whole import with every misfit named; a directory with no
// profile of a pgo build is refused.
func TestImportProfiles(t *testing.T) {
	s, err := Load(filepath.Join(repoRoot(t), "filters", "builds.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var msc *Build
	for _, b := range s.pgoBuilds() {
		if b.Engine == "modsecurity" && msc == nil {
			msc = b
		}
	}
	if msc == nil {
		t.Fatal("builds.yaml has no modsecurity pgo build")
	}
	rel, infoRel := msc.profilePath()
	// write puts a profile and its info into dir; edit changes the info.
	write := func(t *testing.T, dir string, edit func(*profileInfo)) {
		t.Helper()
		prof := filepath.Join(dir, filepath.Base(rel))
		if err := os.WriteFile(prof, []byte("not really a profdata file"), 0o644); err != nil {
			t.Fatal(err)
		}
		sum, err := host.FileSHA256(prof)
		if err != nil {
			t.Fatal(err)
		}
		info := &profileInfo{Engine: msc.Engine, Profile: filepath.Base(rel), ProfileSHA256: sum,
			TrainedOn: msc.Engine + "@" + msc.PGO.From, Training: msc.PGO.Training, SourceVersion: msc.Version,
			SourceSHA256: msc.Source.SHA256, GitSHA: "0123456789abcdef0123456789abcdef01234567", CreatedUTC: "2026-11-30T00:00:00Z"}
		if edit != nil {
			edit(info)
		}
		if err := writeProfileInfo(filepath.Join(dir, filepath.Base(infoRel)), info); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		edit func(*profileInfo)
		none bool
		want []string // parts of the error; nil = imported
	}{
		{"fits", nil, false, nil},
		{"other source version and contents", func(p *profileInfo) { p.SourceVersion = "3.0.12"; p.ProfileSHA256 = "00" }, false,
			[]string{"source_version \"3.0.12\", want \"" + msc.Version + "\"", "profile_sha256", "nothing imported"}},
		{"other training suite", func(p *profileInfo) { p.Training = "quick" }, false, []string{"training \"quick\""}},
		{"no profile", nil, true, []string{"no profile of a pgo build", filepath.Base(rel)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, src := t.TempDir(), t.TempDir()
			if !tt.none {
				write(t, src, tt.edit)
			}
			got, err := s.importProfiles(root, src)
			if tt.want == nil {
				if err != nil || len(got) != 1 || got[0].Build != msc.Mode() || got[0].Profile != rel {
					t.Fatalf("got %+v, %v; want %s imported to %s", got, err, msc.Mode(), rel)
				}
				// What was imported is what CheckProfile accepts.
				if _, err := s.checkProfile(root, msc); err != nil {
					t.Errorf("CheckProfile after import: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("got %+v, want a refusal", got)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("got %q, want it to contain %q", err, w)
				}
			}
			if _, serr := os.Stat(filepath.Join(root, rel)); serr == nil {
				t.Errorf("refused import left %s in build/pgo", rel)
			}
		})
	}
}
