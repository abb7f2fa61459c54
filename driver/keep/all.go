package keep

import (
	"errors"
	"fmt"
	"io"

	"wafbench/driver/internal/usage"
)

// All is 'wafbench keep': Keep of every run directory in dirs, in order,
// each kept directory printed as a line to w. It stops at the first
// failure; an ErrInput one is bad input (driver/internal/usage).
func All(dirs []string, o Options, w io.Writer) error {
	for _, dir := range dirs {
		out, err := Keep(dir, o)
		if errors.Is(err, ErrInput) {
			return usage.Wrap(err)
		}
		if err != nil {
			return err
		}
		fmt.Fprintln(w, out)
	}
	return nil
}
