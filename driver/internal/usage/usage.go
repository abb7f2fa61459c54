// Package usage marks bad input: an error caused by the command line or a
// file it names, which wafbench reports as one line and exit status 2,
// apart from failures while running (exit status 1).
package usage

import (
	"errors"
	"fmt"
)

// Error is bad input; its message is the wrapped error's.
type Error struct{ Err error }

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Errorf is bad input with a formatted message (%w wraps as fmt.Errorf does).
func Errorf(format string, a ...any) error { return &Error{fmt.Errorf(format, a...)} }

// Wrap marks err as bad input; nil stays nil.
func Wrap(err error) error {
	if err == nil {
		return nil
	}
	return &Error{err}
}

// Is reports whether err is, or wraps, bad input.
func Is(err error) bool {
	var e *Error
	return errors.As(err, &e)
}
