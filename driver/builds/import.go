package builds

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"wafbench/driver/internal/host"
	"wafbench/internal/atomicfile"
)

// profileMisfits lists how a profile (its info file and the SHA-256 of its
// contents) fails to fit the pgo build b: not the file its info describes,
// trained on another engine source (version; archive SHA-256 for
// debian-source builds), on another instrumented build, or by another
// training suite. Empty when it fits.
func profileMisfits(b *Build, info *profileInfo, sum string) []string {
	wantOn := b.Mode()
	if b.PGO.From != "" {
		wantOn = b.Engine + "@" + b.PGO.From
	}
	var bad []string
	check := func(field, got, want string) {
		if got != want {
			bad = append(bad, fmt.Sprintf("%s %q, want %q", field, got, want))
		}
	}
	check("profile_sha256", info.ProfileSHA256, sum)
	check("engine", info.Engine, b.Engine)
	check("source_version", strings.TrimPrefix(info.SourceVersion, "v"), strings.TrimPrefix(b.Version, "v"))
	if b.Source.Kind == sourceDebianSource {
		check("source_sha256", info.SourceSHA256, b.Source.SHA256)
	}
	check("trained_on", info.TrainedOn, wantOn)
	check("training", info.Training, b.PGO.Training)
	return bad
}

// importedProfile is one profile ImportProfiles installed.
type importedProfile struct {
	Build   string // mode of the pgo build it serves
	Profile string // where it now is, relative to the repository root
	Info    *profileInfo
	// OtherCommit is set when the profile was trained at another commit
	// than the checkout's: the build script reports module functions that
	// changed since (a warning, not a misfit).
	OtherCommit bool
}

// Errors of ImportProfiles that mean bad input: a directory holding no
// profile of any pgo build, or a profile that does not fit its build.
var (
	errNoProfiles    = errors.New("no profile of a pgo build")
	errProfileMisfit = errors.New("nothing imported")
)

// importProfiles installs the training profiles held in dir — laid out as
// build/pgo/ is, e.g. the pgo/ folder of the pgo workflow's artifact — into
// root/build/pgo/, where the pgo builds consume them. Each profile found
// (the file name Build.ProfilePath gives, with its JSON info file beside
// it) must fit its build in s (profileMisfits: contents, engine source
// version and archive, instrumented build, training suite); one that does
// not refuses the whole import, every misfit named in one error, and
// nothing is copied. Builds whose profile dir lacks are left alone.
func (s *Set) importProfiles(root, dir string) ([]importedProfile, error) {
	type pending struct {
		b                *Build
		src, info, dst   string
		infoDst, relPath string
		parsed           *profileInfo
	}
	var todo []pending
	var misfits []string
	head := gitSHA(root)
	seen := map[string]bool{} // builds of one engine version share a profile: import it once
	for _, b := range s.pgoBuilds() {
		rel, infoRel := b.profilePath()
		if seen[rel] {
			continue
		}
		seen[rel] = true
		src := filepath.Join(dir, filepath.Base(rel))
		if _, err := os.Stat(src); err != nil {
			continue
		}
		infoSrc := filepath.Join(dir, filepath.Base(infoRel))
		info, err := readProfileInfo(infoSrc)
		if err != nil {
			misfits = append(misfits, fmt.Sprintf("%s: profile %s without a readable info file %s (%v)", b.Mode(), src, filepath.Base(infoRel), err))
			continue
		}
		sum, err := host.FileSHA256(src)
		if err != nil {
			return nil, err
		}
		if bad := profileMisfits(b, info, sum); len(bad) > 0 {
			misfits = append(misfits, fmt.Sprintf("%s: %s does not fit (%s)", b.Mode(), src, strings.Join(bad, "; ")))
			continue
		}
		todo = append(todo, pending{b: b, src: src, info: infoSrc, dst: filepath.Join(root, rel),
			infoDst: filepath.Join(root, infoRel), relPath: rel, parsed: info})
	}
	if len(misfits) > 0 {
		return nil, fmt.Errorf("import profiles from %s: %s; %w", dir, strings.Join(misfits, "; "), errProfileMisfit)
	}
	if len(todo) == 0 {
		var want []string
		for _, b := range s.pgoBuilds() {
			rel, _ := b.profilePath()
			want = append(want, filepath.Base(rel))
		}
		return nil, fmt.Errorf("import profiles from %s: %w (want one of %s)", dir, errNoProfiles, strings.Join(want, ", "))
	}
	var out []importedProfile
	for _, p := range todo {
		if err := os.MkdirAll(filepath.Dir(p.dst), 0o755); err != nil {
			return out, err
		}
		// The info file goes last: CheckProfile needs both, and a profile
		// beside a stale info file is refused as not fitting.
		for _, c := range [][2]string{{p.src, p.dst}, {p.info, p.infoDst}} {
			data, err := os.ReadFile(c[0])
			if err != nil {
				return out, err
			}
			if err := atomicfile.WriteFile(c[1], data); err != nil {
				return out, err
			}
		}
		out = append(out, importedProfile{Build: p.b.Mode(), Profile: p.relPath, Info: p.parsed,
			OtherCommit: p.parsed.GitSHA != "" && head != "" && p.parsed.GitSHA != head})
	}
	return out, nil
}
