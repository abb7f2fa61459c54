package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wafbench/driver/modes"
)

// noticeNames is what NOTICE must say for each engine and each host a mode
// can run on: the component's name and its license. A new engine or host
// fails TestLicenseAndNotice until it is added here and to NOTICE.
var noticeNames = map[string][]string{
	modes.ModSecurity:         {"libmodsecurity", "Apache-2.0"},
	modes.Coraza:              {"Coraza", "corazawaf/coraza", "Apache-2.0"},
	string(modes.Envoy):       {"Envoy", "envoyproxy/envoy", "Apache-2.0"},
	string(modes.Nginx):       {"nginx", "BSD-2-Clause", "ModSecurity-nginx"},
	string(modes.Caddy):       {"Caddy", "caddyserver/caddy"},
	string(modes.Direct):      {"go-httpbin", "MIT"},
	"crs":                     {"OWASP CRS", "coraza-coreruleset", "Copyright (c) 2006-2020 Trustwave", "envoy-*.yaml"},
	"abi":                     {"filters/abi/wafbench_abi.h", "source/extensions/dynamic_modules/abi/abi.h"},
	modes.RefCaddyCoraza:      {"ref-caddy-coraza"},
	modes.RefNginxModSecurity: {"ref-nginx-modsecurity"},
	modes.CorazaWasm:          {"coraza-wasm"},
}

// TestLicenseAndNotice checks that the project carries its license and a
// NOTICE naming every engine, host and rule set that runs inside or beside
// it, with their licenses.
func TestLicenseAndNotice(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	lic, err := os.ReadFile(filepath.Join(root, "LICENSE"))
	if err != nil {
		t.Fatalf("LICENSE: %v", err)
	}
	if !strings.Contains(string(lic), "Apache License") || !strings.Contains(string(lic), "Version 2.0, January 2004") {
		t.Error("LICENSE: want the Apache License, Version 2.0 text")
	}
	b, err := os.ReadFile(filepath.Join(root, "NOTICE"))
	if err != nil {
		t.Fatalf("NOTICE: %v", err)
	}
	notice := string(b)
	if !strings.Contains(notice, "Copyright 2026 The wafbench authors") {
		t.Error("NOTICE: want the project's copyright line (The wafbench authors)")
	}
	var keys []string
	keys = append(keys, modes.Engines...)
	for _, h := range []modes.Host{modes.Envoy, modes.Nginx, modes.Direct, modes.Caddy} {
		keys = append(keys, string(h))
	}
	keys = append(keys, "crs", "abi", modes.RefCaddyCoraza, modes.RefNginxModSecurity, modes.CorazaWasm)
	for _, k := range keys {
		want, ok := noticeNames[k]
		if !ok {
			t.Errorf("%s: no NOTICE entry known for it: add the component and its license to NOTICE and to noticeNames", k)
			continue
		}
		for _, w := range want {
			if !strings.Contains(notice, w) {
				t.Errorf("NOTICE: %s: want %q", k, w)
			}
		}
	}
	abi, err := os.ReadFile(filepath.Join(root, "filters", "abi", "wafbench_abi.h"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"envoyproxy/envoy", "source/extensions/dynamic_modules/abi/abi.h", "Apache-2.0"} {
		if !strings.Contains(string(abi), w) {
			t.Errorf("filters/abi/wafbench_abi.h: attribution: want %q", w)
		}
	}
}
