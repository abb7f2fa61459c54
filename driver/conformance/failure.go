package conformance

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// failure is how an override says a stage fails, read against the reason
// judge gave it: expected rule IDs not logged (Missing: the IDs judge
// names are among these), forbidden IDs logged (Logged, likewise), no
// answer at all, or the log not matching the stage's regex. One kind per
// entry.
type failure struct {
	Missing  []uint `json:"missing,omitempty"`
	Logged   []uint `json:"logged,omitempty"`
	NoAnswer bool   `json:"no_answer,omitempty"`
	LogRegex bool   `json:"log_regex,omitempty"`
}

// The reasons judge writes, as failure reads them back.
var (
	missingWhy = regexp.MustCompile(`^expected ids \[([0-9 ]*)\] not logged`)
	loggedWhy  = regexp.MustCompile(`^ids \[([0-9 ]*)\] logged, want none of them`)
)

const (
	noAnswerWhy = "no response: "
	logRegexWhy = "log does not match "
)

func (f *failure) validate() error {
	n := 0
	for _, set := range []bool{len(f.Missing) > 0, len(f.Logged) > 0, f.NoAnswer, f.LogRegex} {
		if set {
			n++
		}
	}
	if n != 1 {
		return errors.New("want exactly one of missing, logged, no_answer, log_regex")
	}
	return nil
}

// matches reports whether a stage judged with reason why fails as f says.
func (f *failure) matches(why string) bool {
	switch {
	case f.NoAnswer:
		return strings.HasPrefix(why, noAnswerWhy)
	case f.LogRegex:
		return strings.HasPrefix(why, logRegexWhy)
	case len(f.Missing) > 0:
		return idsAmong(missingWhy, why, f.Missing)
	case len(f.Logged) > 0:
		return idsAmong(loggedWhy, why, f.Logged)
	}
	return false
}

// idsAmong reports whether why has re's form and every rule ID it names is
// in want.
func idsAmong(re *regexp.Regexp, why string, want []uint) bool {
	m := re.FindStringSubmatch(why)
	if m == nil {
		return false
	}
	for _, f := range strings.Fields(m[1]) {
		id, err := strconv.ParseUint(f, 10, 32)
		if err != nil || !slices.Contains(want, uint(id)) {
			return false
		}
	}
	return true
}

// String is the failure as an unexplained test's reason names it.
func (f *failure) String() string {
	switch {
	case f.NoAnswer:
		return "no answer"
	case f.LogRegex:
		return "a log regex mismatch"
	case len(f.Missing) > 0:
		return fmt.Sprintf("rule IDs %v not logged", f.Missing)
	}
	return fmt.Sprintf("rule IDs %v logged", f.Logged)
}
