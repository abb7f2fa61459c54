package wafconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	own := filepath.Join(t.TempDir(), "Strict")
	if err := os.MkdirAll(own, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(own, "main.conf"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		list    []string
		dirs    []string
		want    string // names, comma-separated
		wantErr string
	}{
		{name: "paranoia levels", list: []string{"pl1", "pl4"}, want: "pl1,pl4"},
		{name: "release", list: []string{"crs4.22.0"}, want: "crs4.22.0"},
		{name: "own directory added", list: []string{"pl2"}, dirs: []string{own}, want: "pl2,strict"},
		{name: "own directory placed", list: []string{"strict", "pl1"}, dirs: []string{own}, want: "strict,pl1"},
		{name: "none", want: ""},
		{name: "unknown", list: []string{"pl5"}, wantErr: `unknown configuration "pl5"`},
		{name: "twice", list: []string{"pl1", "pl1"}, wantErr: "pl1 listed twice"},
		{name: "own not given", list: []string{"strict"}, wantErr: `unknown configuration "strict"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.list, tc.dirs)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, c := range got {
				names = append(names, c.Name)
			}
			if g := strings.Join(names, ","); g != tc.want {
				t.Errorf("got %s, want %s", g, tc.want)
			}
		})
	}
}

func TestBuiltinLevels(t *testing.T) {
	cs, err := Parse(Builtin(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		want := 1
		if strings.HasPrefix(c.Name, "pl") {
			want = int(c.Name[2] - '0')
		}
		if c.ParanoiaLevel != want || c.CRSVersion == "" {
			t.Errorf("%s: got paranoia level %d, CRS %q; want %d and a release", c.Name, c.ParanoiaLevel, c.CRSVersion, want)
		}
	}
}

// TestPrepareRelease exports CRS 4.22.0 from its module zip (downloaded
// by the go command when the module cache lacks it) and checks it differs
// from 4.25.0 at the same level.
func TestPrepareRelease(t *testing.T) {
	root := t.TempDir()
	cs, err := Parse([]string{"pl1", "crs4.22.0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var sums []string
	for _, c := range cs {
		p, err := Prepare(root, c)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(p.RulesFile)
		if err != nil {
			t.Fatal(err)
		}
		if want := "CRS " + c.CRSVersion + " entry point"; !strings.Contains(string(data), want) {
			t.Errorf("%s: main.conf lacks %q", c.Name, want)
		}
		sums = append(sums, p.SHA256)
	}
	if sums[0] == sums[1] {
		t.Errorf("pl1 and crs4.22.0 hash alike (%s)", sums[0])
	}
}
