package report

import (
	"fmt"
	"slices"
	"strings"

	"wafbench/driver/modes"
	"wafbench/driver/result"
)

// writeSlow answers "does a slow client get past the WAF, and what does it
// cost?": per mode and slow-client plan (profile slow), how the request was
// sent, every connection's answer, which of the host's client timeouts
// ended it and after how long, and the proxy's RSS held per connection.
// Every slow workload carries an attack, so a WAF mode answering any 200
// is a bypass. Nothing is written without slow-client records.
func writeSlow(m *md, fig *figures) {
	sm := buildSlow(fig.Records)
	if sm == nil {
		return
	}
	m.p("## Slow clients")
	m.nl()
	m.p("Each plan sends an attack over a raw socket on every one of its connections at once: the head or the body in pieces with a pause between writes, or the body stopped part-way and held. \"Ended by\" names the host's client timeouts whose counters moved during the plan (\"client bound\" when the client gave up first, at its max wait; none when the proxy answered before any fired). Elapsed is connect → answer per connection: median [min, max]. RSS held is the proxy's resident memory once every connection had sent what it would, minus before the plan, per connection. A WAF mode that answers any of these attacks 200 is bypassed.")
	m.nl()
	if ts := firstTimeouts(sm.rows); ts != "" {
		m.p("Client timeouts of the proxy in these trials: %s.", ts)
		m.nl()
	}
	m.head("mode", "plan", "how sent", "conns", "answers", "want", "ended by", "elapsed s", "RSS held KiB/conn", "result")
	for _, r := range sm.rows {
		s := r.Slow
		m.row("`"+r.Mode+"`", "`"+r.Workload+"`", howSent(s), fmt.Sprint(r.Conns), countsCell(s.Answers),
			fmt.Sprint(r.ExpectStatus), endedBy(s), elapsedCell(s.ElapsedMs), heldCell(s, r.Conns), slowResult(r))
	}
	m.nl()
	for _, md := range sm.order {
		switch {
		case !modes.IsWAF(md):
		case sm.bypass[md] > 0:
			m.p("- `%s`: **bypassed**: %d of %d slow attack requests answered 200.", md, sm.bypass[md], sm.sent[md])
		default:
			m.p("- `%s`: no bypass: none of %d slow attack requests was answered 200.", md, sm.sent[md])
		}
	}
	m.nl()
}

// slowResult is a slow-client row's result: held, an error, no WAF, or a
// bypass.
func slowResult(r *result.Record) string {
	switch {
	case r.Error != "":
		return "error: " + r.Error
	case !modes.IsWAF(r.Mode):
		return "no WAF"
	case r.Slow.Answers["200"] > 0:
		return fmt.Sprintf("**BYPASS**: %d answered 200", r.Slow.Answers["200"])
	}
	return "held"
}

// firstTimeouts states the client timeouts of the first record that has
// them ("request_headers_timeout 10 s, …"); "" when none does.
func firstTimeouts(rows []*result.Record) string {
	for _, r := range rows {
		if len(r.Slow.Timeouts) == 0 {
			continue
		}
		var parts []string
		for _, t := range r.Slow.Timeouts {
			parts = append(parts, fmt.Sprintf("`%s` %s s", t.Name, f(t.AfterS, 0)))
		}
		return strings.Join(parts, ", ")
	}
	return ""
}

// howSent words a plan: "head 4 B / 50 ms", "body 16384 of 65536 B in
// 4096 B / 1 ms, then held".
func howSent(s *result.Slow) string {
	var parts []string
	if s.HeadChunk > 0 {
		parts = append(parts, fmt.Sprintf("head %d B / %s ms", s.HeadChunk, f(s.IntervalMs, 0)))
	}
	body := fmt.Sprintf("body %d B", s.BodyBytes)
	if s.StopAfter >= 0 && s.StopAfter < s.BodyBytes {
		body = fmt.Sprintf("body %d of %d B", s.StopAfter, s.BodyBytes)
	}
	if s.BodyChunk > 0 {
		body += fmt.Sprintf(" in %d B / %s ms", s.BodyChunk, f(s.IntervalMs, 0))
	}
	if s.StopAfter >= 0 && s.StopAfter < s.BodyBytes {
		body += ", then held"
	}
	if s.BodyBytes > 0 {
		parts = append(parts, body)
	}
	if len(parts) == 0 {
		return "at once"
	}
	return strings.Join(parts, "; ")
}

// endedBy names the timeouts that fired during the plan, or the client's
// bound, or "–" when the proxy answered first.
func endedBy(s *result.Slow) string {
	var parts []string
	for _, t := range s.Timeouts {
		if t.Fired > 0 {
			parts = append(parts, fmt.Sprintf("`%s` (%s s) ×%d", t.Name, f(t.AfterS, 0), t.Fired))
		}
	}
	if n := s.Answers["timeout"]; n > 0 {
		parts = append(parts, fmt.Sprintf("client bound (%s s) ×%d", f(s.MaxWaitS, 0), n))
	}
	if len(parts) == 0 {
		return noValue
	}
	return strings.Join(parts, ", ")
}

func elapsedCell(ms []float64) string {
	if len(ms) == 0 {
		return noValue
	}
	v := slices.Clone(ms)
	slices.Sort(v)
	return withCI(medianOf64(v)/1e3, v[0]/1e3, v[len(v)-1]/1e3, 1)
}

// heldCell is the RSS grown while the plan's connections were held, per
// connection.
func heldCell(s *result.Slow, conns int) string {
	if s.RSSHeldKiB == 0 || s.RSSBeforeKiB == 0 || conns == 0 {
		return noValue
	}
	return f(float64(s.RSSHeldKiB-s.RSSBeforeKiB)/float64(conns), 0)
}
