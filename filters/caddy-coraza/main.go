// Command caddy is Caddy v2 with the modules the ref-caddy-coraza reference
// host uses and nothing else: the HTTP server, reverse_proxy, and wafbench's
// Coraza handler and counters endpoint (package caddywaf). The driver
// (driver/refhost) writes its JSON configuration and runs
// `caddy run --config <file>`.
package main

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	_ "github.com/caddyserver/caddy/v2/modules/caddyhttp"
	_ "github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"

	_ "wafbench/filters/caddy-coraza/caddywaf"
)

func main() {
	caddycmd.Main()
}
