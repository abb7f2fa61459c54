// Package engine wraps a Coraza v3 WAF for wafbench: it loads one rule set,
// maps an HTTP request as Envoy presents it onto a Coraza transaction, and
// reports the first intervention as a Verdict. It has no Envoy or cgo
// dependency, so it can be tested and benchmarked on its own.
package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path/filepath"

	"github.com/corazawaf/coraza/v3"
	"github.com/corazawaf/coraza/v3/experimental"
	"github.com/corazawaf/coraza/v3/types"

	"wafbench/internal/rulefiles"
)

// defaultMaxBodyBytes is the request-body buffering limit used when
// Config.MaxBodyBytes is zero (1 MiB, the same as SecRequestBodyLimit).
const defaultMaxBodyBytes = 1 << 20

// Config describes one WAF instance. It mirrors the filter_config JSON of
// both wafbench Envoy modules.
type Config struct {
	// RulesFile is the absolute path of the rule entry point, e.g. the
	// main.conf written by crs.Export.
	RulesFile string `json:"rules_file"`
	// InspectResponse runs phases 3 and 4 on responses.
	InspectResponse bool `json:"inspect_response"`
	// MaxBodyBytes caps the request body the filter buffers and feeds to the
	// engine; a larger body is rejected with 413. 0 means DefaultMaxBodyBytes.
	// It also caps the response body a filter buffers for phase 4.
	MaxBodyBytes int `json:"max_body_bytes"`
	// MatchLog reports every rule match Coraza logs as one MatchLine
	// through the writer given to NewLogged (the CRS conformance runs).
	// Off, no callback is installed: the engine does no extra work.
	MatchLog bool `json:"match_log,omitempty"`
}

// Validate reports whether c can build a WAF.
func (c Config) Validate() error {
	if c.RulesFile == "" {
		return errors.New("engine config: rules_file: want an absolute path, got empty")
	}
	if !filepath.IsAbs(c.RulesFile) {
		return fmt.Errorf("engine config: rules_file: want an absolute path, got %q", c.RulesFile)
	}
	if c.MaxBodyBytes < 0 {
		return fmt.Errorf("engine config: max_body_bytes: want >= 0 (0 means %d), got %d", defaultMaxBodyBytes, c.MaxBodyBytes)
	}
	return nil
}

// WAF is a loaded rule set. It is safe for concurrent use; each request gets
// its own Tx.
type WAF struct {
	cfg Config
	waf coraza.WAF
}

// New loads cfg.RulesFile (Include directives resolve relative to the file's
// directory; absolute paths are used as given).
func New(cfg Config) (*WAF, error) { return newFS(cfg, nil) }

// newFS is New reading the rule files through root, which takes absolute
// paths (e.g. a rulefiles.Bundle, for the Wasm filter, which has no file
// system); nil means the operating system's files.
func newFS(cfg Config, root fs.FS) (*WAF, error) { return NewLogged(cfg, root, nil) }

// NewLogged is NewFS with the writer of cfg.MatchLog: with MatchLog set,
// every rule match that Coraza logs is passed to write as one MatchLine
// (from the goroutine evaluating the rule); write must not be nil then.
func NewLogged(cfg Config, root fs.FS, write func(line string)) (*WAF, error) {
	if cfg.MatchLog && write == nil {
		return nil, errors.New("engine config: match_log: no line writer")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = defaultMaxBodyBytes
	}
	wc := coraza.NewWAFConfig()
	if root == nil {
		root = rulefiles.OSFS{}
	} else {
		wc = wc.WithRootFS(root)
	}
	if _, err := fs.Stat(root, cfg.RulesFile); err != nil {
		return nil, fmt.Errorf("engine config: rules_file: %w", err)
	}
	// The same refusal as the C++ module's: no rule may run scripts or
	// programs (Coraza would silently ignore SecRuleScript, so the two
	// engines would not evaluate the same rules).
	if err := rulefiles.CheckNoScriptsFS(root, cfg.RulesFile); err != nil {
		return nil, fmt.Errorf("engine config: rules_file: %w", err)
	}
	wc, err := withMatchLog(wc, cfg.MatchLog, write)
	if err != nil {
		return nil, err
	}
	w, err := coraza.NewWAF(wc.WithDirectivesFromFile(cfg.RulesFile))
	if err != nil {
		return nil, fmt.Errorf("engine: load rules %s: %w", cfg.RulesFile, err)
	}
	return &WAF{cfg: cfg, waf: w}, nil
}

// Config returns the configuration the WAF was built with (defaults applied).
func (w *WAF) Config() Config { return w.cfg }

// Rules is the number of rules the WAF loaded, or -1 when the linked Coraza
// cannot tell (its WAF lacks experimental.WAFWithRules; v3.7.0 and v3.8.1
// have it).
func (w *WAF) Rules() int {
	if r, ok := w.waf.(experimental.WAFWithRules); ok {
		return r.RulesCount()
	}
	return -1
}

// Verdict is an intervention: the HTTP status to answer with, the rule that
// decided it (0 when the filter itself decided, e.g. body too large, or an
// engine error failed the request closed) and the phase (1 request headers,
// 2 request body, 3 response headers, 4 response body). Evaluate reports a
// request that passes as Status 200, Phase 0.
type Verdict struct {
	Status int
	RuleID int
	Phase  int
}

// blocked reports whether v stops the request.
func (v Verdict) blocked() bool { return v.Phase != 0 }

// Tx is one request's transaction. It is not safe for concurrent use; an
// Envoy stream uses it from its worker thread only.
type Tx struct {
	w       *WAF
	tx      types.Transaction
	body    int
	verdict *Verdict
	err     error
}

// NewTx starts a transaction.
func (w *WAF) NewTx() *Tx {
	return &Tx{w: w, tx: w.waf.NewTransaction()}
}

// ProcessConnection records the client and server endpoints.
func (t *Tx) ProcessConnection(clientIP string, clientPort int, serverIP string, serverPort int) {
	t.tx.ProcessConnection(clientIP, clientPort, serverIP, serverPort)
}

// ProcessURI records the request line; path includes the query string and
// proto is e.g. "HTTP/1.1".
func (t *Tx) ProcessURI(path, method, proto string) {
	t.tx.ProcessURI(path, method, proto)
}

// AddHeader adds one request header (no pseudo-headers; map :authority to
// Host first, see MapHeaders).
func (t *Tx) AddHeader(k, v string) { t.tx.AddRequestHeader(k, v) }

// ProcessRequestHeaders runs phase 1.
func (t *Tx) ProcessRequestHeaders() *Verdict {
	if t.verdict != nil {
		return t.verdict
	}
	return t.interrupted(t.tx.ProcessRequestHeaders(), 1)
}

// WriteBody feeds one request-body chunk. A body beyond MaxBodyBytes is
// rejected with 413 without being fed; the engine's own
// SecRequestBodyLimitAction Reject also yields 413. An engine error fails
// the request closed: the verdict is 500 and the error is returned (and kept
// in Err).
func (t *Tx) WriteBody(b []byte) (*Verdict, error) {
	if t.verdict != nil {
		return t.verdict, t.err
	}
	if len(b) == 0 {
		return nil, nil
	}
	t.body += len(b)
	if t.body > t.w.cfg.MaxBodyBytes {
		t.verdict = &Verdict{Status: http.StatusRequestEntityTooLarge, Phase: 2}
		return t.verdict, nil
	}
	it, _, err := t.tx.WriteRequestBody(b)
	if err != nil {
		return t.fail(2, fmt.Errorf("engine: write request body: %w", err)), t.err
	}
	return t.interrupted(it, 2), nil
}

// ProcessRequestBody runs phase 2. Call it once the whole body was written,
// also for requests without a body (CRS evaluates its anomaly score in
// phase 2). An engine error fails the request closed: the verdict is 500
// and Err reports the error.
func (t *Tx) ProcessRequestBody() *Verdict {
	if t.verdict != nil {
		return t.verdict
	}
	it, err := t.tx.ProcessRequestBody()
	if err != nil {
		return t.fail(2, fmt.Errorf("engine: process request body: %w", err))
	}
	return t.interrupted(it, 2)
}

// AddResponseHeader adds one response header (no pseudo-headers).
func (t *Tx) AddResponseHeader(k, v string) { t.tx.AddResponseHeader(k, v) }

// processResponse runs phases 3 and 4 for a response whose body the
// engine does not read (the common configuration has response body access
// off, so phase 4 sees no body). It does nothing unless
// Config.InspectResponse is set.
func (t *Tx) processResponse(status int, proto string) *Verdict {
	if v := t.ProcessResponseHeaders(status, proto); v != nil || !t.w.cfg.InspectResponse {
		return v
	}
	return t.ProcessResponseBody()
}

// ProcessResponseHeaders runs phase 3 (add the headers first). It does
// nothing unless Config.InspectResponse is set. Then, when
// WantsResponseBody, write the body and call ProcessResponseBody; else call
// ProcessResponseBody right away.
func (t *Tx) ProcessResponseHeaders(status int, proto string) *Verdict {
	if t.verdict != nil || !t.w.cfg.InspectResponse {
		return t.verdict
	}
	return t.interrupted(t.tx.ProcessResponseHeaders(status, proto), 3)
}

// WantsResponseBody reports whether phase 4 reads the response body: the
// rules set SecResponseBodyAccess On and the response's content type is
// one SecResponseBodyMimeType names. Ask after ProcessResponseHeaders.
func (t *Tx) WantsResponseBody() bool {
	return t.verdict == nil && t.w.cfg.InspectResponse && t.tx.IsResponseBodyAccessible() &&
		t.tx.IsResponseBodyProcessable()
}

// WriteResponseBody feeds one response-body chunk (Coraza keeps at most
// SecResponseBodyLimit bytes and acts as SecResponseBodyLimitAction says).
func (t *Tx) WriteResponseBody(b []byte) *Verdict {
	if t.verdict != nil || len(b) == 0 {
		return t.verdict
	}
	it, _, err := t.tx.WriteResponseBody(b)
	if err != nil {
		return t.fail(4, fmt.Errorf("engine: write response body: %w", err))
	}
	return t.interrupted(it, 4)
}

// ProcessResponseBody runs phase 4 (after ProcessResponseHeaders).
func (t *Tx) ProcessResponseBody() *Verdict {
	if t.verdict != nil || !t.w.cfg.InspectResponse {
		return t.verdict
	}
	it, err := t.tx.ProcessResponseBody()
	if err != nil {
		return t.fail(4, fmt.Errorf("engine: process response body: %w", err))
	}
	return t.interrupted(it, 4)
}

// Err returns the engine error that failed the transaction closed, if any.
func (t *Tx) Err() error { return t.err }

// fail records an engine error and the 500 verdict it turns into.
func (t *Tx) fail(phase int, err error) *Verdict {
	t.err = err
	t.verdict = &Verdict{Status: http.StatusInternalServerError, Phase: phase}
	return t.verdict
}

// ProcessLogging runs phase 5.
func (t *Tx) ProcessLogging() { t.tx.ProcessLogging() }

// Close releases the transaction. The Tx must not be used afterwards.
func (t *Tx) Close() {
	if t.tx != nil {
		_ = t.tx.Close()
		t.tx = nil
	}
}

func (t *Tx) interrupted(it *types.Interruption, phase int) *Verdict {
	if it == nil {
		return nil
	}
	status := it.Status
	if status == 0 {
		status = http.StatusForbidden // deny/drop without status:
	}
	t.verdict = &Verdict{Status: status, RuleID: it.RuleID, Phase: phase}
	return t.verdict
}
