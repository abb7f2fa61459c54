// Package waf runs one WAF engine for the external-processing server with
// the code the engine's Envoy module runs: Coraza through the request logic
// the Coraza module and the proxy-wasm filter share (filters/coraza/stream),
// ModSecurity through cgo to the C++ engine wrapper the ModSecurity module
// links (filters/modsecurity/engine.h, its transaction-level C API
// engine_tx_c.h). It takes the module's filter_config, keeps the module's
// counters under their names and writes the module's self-report line;
// what differs is only how a request reaches it (Request, whole bodies) and
// how an answer leaves it (Reply).
package waf

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
)

// Engines are the engine names Open accepts.
var Engines = []string{"coraza", "modsecurity"}

// StageTimersEnv turns the stage-timer counters on when set to "1", as it
// does in both modules.
const StageTimersEnv = "WAFBENCH_STAGE_TIMERS"

// ReplyContentType is the content type of every reply, as the modules send.
const ReplyContentType = "text/plain"

// Request is what a proxy tells of a request when its headers arrive.
type Request struct {
	// Headers as the proxy presents them, pseudo-headers (:method, :path,
	// :authority) included, names in lower case.
	Headers        [][2]string
	Client, Server string // endpoints as "ip:port"; "" when unknown
	Proto          string // e.g. "HTTP/1.1"; "" means HTTP/1.1
}

// Reply is the answer the engine's module would send itself (a local
// reply): a rule's verdict, 413 from the body limit, 500 on an engine error.
type Reply struct {
	Status  int
	Body    string
	Details string // Envoy's response-code details the module gives
}

// Stat is one counter and its value.
type Stat struct {
	Name  string
	Value uint64
}

// Engine is one loaded filter configuration, shared by all streams.
type Engine interface {
	// Name is the engine's name ("coraza" or "modsecurity").
	Name() string
	// SelfReport is the module's self-report line (without newline).
	SelfReport() string
	// MaxBodyBytes is the configuration's request-body limit.
	MaxBodyBytes() int
	// Stats are the module's counters that this configuration defines, in
	// the module's order.
	Stats() []Stat
	// NewStream starts one request.
	NewStream() Stream
	// Close releases the engine; no stream may be in use.
	Close()
}

// Stream is one request. Its methods are called from one goroutine at a
// time, in this order: RequestHeaders, then RequestBody unless the headers
// ended the request or a reply was returned, then ResponseHeaders when the
// request reached the upstream, then Close. A non-nil Reply answers the
// request; no later step runs then but Close.
type Stream interface {
	// RequestHeaders counts the request and runs phase 1, and phase 2 too
	// when endOfStream (the request has no body).
	RequestHeaders(req Request, endOfStream bool) *Reply
	// RequestBody checks the whole body against the size limit (413), feeds
	// it to the engine and runs phase 2.
	RequestBody(body []byte) *Reply
	// ResponseHeaders runs phases 3 and 4 (without the response body) when
	// the configuration inspects responses; status is the :status value,
	// headers exclude pseudo-headers.
	ResponseHeaders(status int, headers [][2]string) *Reply
	// Close runs phase 5 (when a transaction began) and releases the
	// transaction. Later calls do nothing.
	Close()
}

// Open loads engine (one of Engines) with config, the filter_config string
// the engine's Envoy module receives. build is the build name the
// self-report line gives. An error is one line: the engine's own message.
func Open(engine string, config []byte, build string) (Engine, error) {
	timers := os.Getenv(StageTimersEnv) == "1"
	switch engine {
	case "coraza":
		return openCoraza(config, build, timers)
	case "modsecurity":
		return openModSecurity(config, build, timers)
	}
	return nil, fmt.Errorf("engine: want one of %s, got %q", strings.Join(Engines, ", "), engine)
}

// selfReportPrefix starts the self-report line, as in every wafbench host.
const selfReportPrefix = "wafbench-module "

// moduleName is the self-report's "module": this server, which runs the
// engine the line's "engine" names.
const moduleName = "wafbench_extproc"

// selfReport is the self-report's JSON object, the modules' fields in the
// modules' order.
type selfReport struct {
	Module        string `json:"module"`
	Engine        string `json:"engine"`
	EngineVersion string `json:"engine_version"`
	Build         string `json:"build"`
	Rules         int    `json:"rules"`
}

// selfReportLine is the self-report line of engine at version, build and
// rules loaded.
func selfReportLine(engine, version, build string, rules int) string {
	b, err := json.Marshal(selfReport{Module: moduleName, Engine: engine, EngineVersion: version, Build: build, Rules: rules})
	if err != nil {
		panic(err) // a struct of strings and an int always marshals
	}
	return selfReportPrefix + string(b)
}

// counters is a module's counter set: names, values, and how many of them
// the configuration defines (the stage timers only when on).
type counters struct {
	names   []string
	values  []atomic.Uint64
	defined int
}

func newCounters(names []string, firstTimer int, timers bool) *counters {
	c := &counters{names: names, values: make([]atomic.Uint64, len(names)), defined: firstTimer}
	if timers {
		c.defined = len(names)
	}
	return c
}

// add adds v to counter i when the configuration defines it.
func (c *counters) add(i int, v uint64) {
	if i < c.defined {
		c.values[i].Add(v)
	}
}

func (c *counters) stats() []Stat {
	out := make([]Stat, c.defined)
	for i := range out {
		out[i] = Stat{Name: c.names[i], Value: c.values[i].Load()}
	}
	return out
}
