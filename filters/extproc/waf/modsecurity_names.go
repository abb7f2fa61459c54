package waf

// The ModSecurity module's names, kept here for both builds of the package
// so that a test compares them with module.cc on any machine.

// The ModSecurity module's counters, in its order (module.cc).
const (
	msRequests = iota
	msBlockedPhase1
	msBlockedPhase2
	msEngineErrors
	msBodyTooLarge
	msPhase1Ns
	msBodyNs
	msPhase2Ns
	msLoggingNs
)

var msCounterNames = []string{
	"wafbench_modsecurity_requests", "wafbench_modsecurity_blocked_phase1", "wafbench_modsecurity_blocked_phase2",
	"wafbench_modsecurity_engine_errors", "wafbench_modsecurity_body_too_large", "wafbench_modsecurity_phase1_ns",
	"wafbench_modsecurity_body_ns", "wafbench_modsecurity_phase2_ns", "wafbench_modsecurity_logging_ns",
}

// The module's reply bodies and details (module.cc).
const (
	msBlockedBody  = "Request blocked by wafbench modsecurity filter\n"
	msErrorBody    = "wafbench modsecurity filter error\n"
	msErrorDetails = "wafbench_modsecurity_engine_error"
)
