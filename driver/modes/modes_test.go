package modes

import (
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		want    Name
		wantErr string
	}{
		{in: "passthrough", want: Name{Base: Passthrough, Host: Envoy}},
		{in: "modsecurity", want: Name{Base: ModSecurity, Engine: ModSecurity, Host: Envoy}},
		{in: "modsecurity@3.0.14-pgo", want: Name{Base: ModSecurity, Build: "3.0.14-pgo", Engine: ModSecurity, Host: Envoy}},
		{in: "coraza@re2", want: Name{Base: Coraza, Build: "re2", Engine: Coraza, Host: Envoy}},
		{in: "ref-direct", want: Name{Base: RefDirect, Host: Direct}},
		{in: "ref-nginx-modsecurity@3.0.14-lto", want: Name{Base: RefNginxModSecurity, Build: "3.0.14-lto", Engine: ModSecurity, Host: Nginx}},
		{in: "coraza-wasm", want: Name{Base: CorazaWasm, Engine: Coraza, Host: Envoy}},
		{in: "ref-caddy-coraza", want: Name{Base: RefCaddyCoraza, Engine: Coraza, Host: Caddy}},
		{in: "coraza-extproc", want: Name{Base: CorazaExtProc, Engine: Coraza, Host: Envoy}},
		{in: "modsecurity-extproc", want: Name{Base: ModSecurityExtProc, Engine: ModSecurity, Host: Envoy}},
		{in: "coraza-extauthz", want: Name{Base: CorazaExtAuthz, Engine: Coraza, Host: Envoy}},
		{in: "coraza-wasm@re2", wantErr: "has no builds"},
		{in: "coraza-extproc@re2", wantErr: "has no builds"},
		{in: "ref-caddy-coraza@3.7.0", wantErr: "has no builds"},
		{in: "nginx", wantErr: `unknown mode "nginx"`},
		{in: "coraza@", wantErr: "empty build"},
		{in: "passthrough@x", wantErr: "has no builds"},
		{in: "ref-direct@x", wantErr: "has no builds"},
		{in: "coraza@a/b", wantErr: "may not contain"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse(%q) error = %v, want it to contain %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Parse(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
			if got.String() != tt.in {
				t.Errorf("String() = %q, want %q", got.String(), tt.in)
			}
		})
	}
}

func TestExpectKeys(t *testing.T) {
	tests := map[string][]string{
		"passthrough":             {"passthrough", "default"},
		"ref-direct":              {"ref-direct", "default"},
		"coraza":                  {"coraza", "waf", "default"},
		"modsecurity@3.0.14-o2":   {"modsecurity@3.0.14-o2", "modsecurity", "waf", "default"},
		"ref-nginx-modsecurity@x": {"ref-nginx-modsecurity@x", "ref-nginx-modsecurity", "waf", "default"},
		"coraza-wasm":             {"coraza-wasm", "coraza", "waf", "default"},
		"ref-caddy-coraza":        {"ref-caddy-coraza", "waf", "default"},
		"modsecurity-extproc":     {"modsecurity-extproc", "modsecurity", "waf", "default"},
		"coraza-extauthz":         {"coraza-extauthz", "coraza", "waf", "default"},
	}
	for mode, want := range tests {
		if got := ExpectKeys(mode); !reflect.DeepEqual(got, want) {
			t.Errorf("ExpectKeys(%q) = %v, want %v", mode, got, want)
		}
	}
}

func TestSort(t *testing.T) {
	got := []string{"coraza-extauthz", "modsecurity-extproc", "coraza-extproc", "ref-caddy-coraza", "ref-nginx-modsecurity", "coraza-wasm", "coraza@re2", "modsecurity@3.0.14-pgo", "coraza", "ref-direct", "modsecurity", "passthrough", "modsecurity@3.0.14-o2"}
	Sort(got)
	want := []string{"passthrough", "modsecurity", "modsecurity@3.0.14-o2", "modsecurity@3.0.14-pgo", "coraza", "coraza@re2", "coraza-wasm", "coraza-extproc", "modsecurity-extproc", "coraza-extauthz", "ref-direct", "ref-nginx-modsecurity", "ref-caddy-coraza"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Sort = %v, want %v", got, want)
	}
}

func TestPalette(t *testing.T) {
	all := []string{"coraza@re2", "modsecurity", "coraza", "passthrough", "modsecurity@3.0.14-pgo", "coraza@pgo", "mystery", "coraza-wasm", "coraza-extproc", "modsecurity-extproc", "coraza-extauthz", "ref-caddy-coraza", "ref-nginx-modsecurity", "ref-direct"}
	p := Palette(all)
	if len(p) != len(all) {
		t.Fatalf("Palette gave %d colours for %d modes", len(p), len(all))
	}
	seen := map[[4]uint8]string{}
	for m, c := range p {
		k := [4]uint8{c.R, c.G, c.B, c.A}
		if other, ok := seen[k]; ok {
			t.Errorf("%s and %s share colour %v", m, other, c)
		}
		seen[k] = m
	}
	// The default build keeps its engine's colour whatever else is plotted.
	alone := Palette([]string{"coraza", "passthrough"})
	if alone["coraza"] != p["coraza"] || alone["passthrough"] != p["passthrough"] {
		t.Errorf("default-build colours depend on the other modes: %v vs %v", alone, p)
	}
	// The same set in another order gives the same colours.
	rev := append([]string(nil), all...)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	if got := Palette(rev); !reflect.DeepEqual(got, p) {
		t.Errorf("Palette depends on input order")
	}
}

func TestRegistryResolvesTheBuildFile(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	reg, err := Load(filepath.Join(root, "filters", "builds.yaml"), root)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, wantBuild, wantDir, wantErr string
	}{
		{name: "passthrough"},
		{name: "ref-direct"},
		{name: "ref-nginx-modsecurity"},
		{name: "modsecurity", wantBuild: "modsecurity", wantDir: "build/engines/modsecurity"},
		{name: "coraza@re2", wantBuild: "coraza@re2", wantDir: "build/engines/coraza-re2"},
		{name: "modsecurity@3.0.14-pgo", wantBuild: "modsecurity@3.0.14-pgo", wantDir: "build/engines/modsecurity-3.0.14-pgo"},
		{name: "ref-nginx-modsecurity@3.0.14-lto", wantBuild: "modsecurity@3.0.14-lto", wantDir: "build/engines/modsecurity-3.0.14-lto"},
		{name: "coraza@nope", wantErr: `no build "coraza@nope"`},
		{name: "ref-nginx-modsecurity@re2", wantErr: `no build "modsecurity@re2"`},
		{name: "ref-caddy-coraza"},
		{name: "coraza-wasm", wantDir: "build/filters"},
		{name: "coraza-extproc", wantBuild: "coraza", wantDir: "build/extproc"},
		{name: "modsecurity-extproc", wantBuild: "modsecurity", wantDir: "build/extproc"},
		{name: "coraza-extauthz", wantBuild: "coraza", wantDir: "build/extproc"},
		{name: "nginx", wantErr: "known modes: passthrough, modsecurity, "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := reg.Resolve(tt.name)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Resolve(%q) error = %v, want it to contain %q", tt.name, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			gotBuild, gotDir := "", ""
			if m.Build != nil {
				gotBuild = m.Build.Mode()
			}
			if m.Dir != "" {
				gotDir, _ = filepath.Rel(root, m.Dir)
			}
			if gotBuild != tt.wantBuild || gotDir != tt.wantDir {
				t.Errorf("Resolve(%q) = build %q dir %q, want %q %q", tt.name, gotBuild, gotDir, tt.wantBuild, tt.wantDir)
			}
		})
	}
	if _, err := reg.ResolveList("coraza, coraza"); err == nil || !strings.Contains(err.Error(), "listed twice") {
		t.Errorf("ResolveList of a duplicate: %v", err)
	}
	all, err := reg.ResolveList("all")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 5 || all[0].String() != Passthrough {
		t.Errorf("ResolveList(all) = %v", all)
	}
	for _, m := range all {
		if IsWasm(m.String()) || IsExternal(m.String()) || IsReference(m.String()) {
			t.Errorf("ResolveList(all) includes %s", m)
		}
		if m.Build != nil && m.Build.Instrument {
			t.Errorf("ResolveList(all) includes the instrumented build %s", m)
		}
	}
	if _, err := reg.ResolveList(" , "); err == nil {
		t.Errorf("ResolveList of nothing succeeded")
	}
}

func TestParseConfig(t *testing.T) {
	for _, tc := range []struct{ in, want, wantErr string }{
		{in: "coraza+pl2", want: "coraza+pl2"},
		{in: "modsecurity@3.0.14-pgo+crs4.22.0", want: "modsecurity@3.0.14-pgo+crs4.22.0"},
		{in: "passthrough+pl2", wantErr: "no configurations"},
		{in: "coraza+", wantErr: "configuration after '+'"},
	} {
		n, err := Parse(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: got error %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || n.String() != tc.want || n.Config == "" {
			t.Errorf("%s: got %+v (%v), want %s", tc.in, n, err, tc.want)
		}
	}
	if got := ExpectKeys("coraza+pl2"); strings.Join(got, ",") != "coraza+pl2,coraza,waf,default" {
		t.Errorf("ExpectKeys(coraza+pl2) = %v", got)
	}
	if got := ExpectKeys("coraza+pl2~1.39.3"); strings.Join(got, ",") != "coraza+pl2~1.39.3,coraza+pl2,coraza,waf,default" {
		t.Errorf("ExpectKeys(coraza+pl2~1.39.3) = %v", got)
	}
}

func TestIntegration(t *testing.T) {
	tests := map[string]Integration{
		"passthrough":           "",
		"modsecurity":           Module,
		"coraza@re2":            Module,
		"coraza-wasm":           Wasm,
		"coraza-extproc":        ExtProc,
		"modsecurity-extproc":   ExtProc,
		"coraza-extauthz":       ExtAuthz,
		"ref-caddy-coraza":      "",
		"ref-nginx-modsecurity": "",
	}
	for mode, want := range tests {
		if got := IntegrationOf(mode); got != want {
			t.Errorf("IntegrationOf(%q) = %q, want %q", mode, got, want)
		}
		if got, want := IsExternal(mode), want == ExtProc || want == ExtAuthz; got != want {
			t.Errorf("IsExternal(%q) = %v, want %v", mode, got, want)
		}
	}
}

func TestSplitList(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{" , ,", nil},
		{"a", []string{"a"}},
		{"a,b", []string{"a", "b"}},
		{" a , b@16 ,", []string{"a", "b@16"}},
		{"a,,b", []string{"a", "b"}},
	}
	for _, tt := range tests {
		if got := SplitList(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("SplitList(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
