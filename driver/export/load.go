package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"wafbench/driver/load"
	"wafbench/internal/atomicfile"
)

// WriteLoad writes the files 'wafbench load' asks for: res's latency
// distribution as an .hgrm file at hgrmPath and its fortio JSON at
// fortioPath (each skipped when empty); target and conns label it.
func WriteLoad(res *load.Result, hgrmPath, fortioPath, target string, conns int) error {
	if hgrmPath != "" {
		var buf bytes.Buffer
		if err := writeHGRM(&buf, res.Hist); err != nil {
			return fmt.Errorf("load: --hgrm: %w", err)
		}
		if err := atomicfile.WriteFile(hgrmPath, buf.Bytes()); err != nil {
			return fmt.Errorf("load: --hgrm: %w", err)
		}
	}
	if fortioPath != "" {
		st := map[string]int64{}
		for k, v := range res.Statuses {
			st[strconv.Itoa(k)] = v
		}
		f := fortioOf(res.Hist, "wafbench load", target, conns, res.RateRequested, res.Elapsed, st)
		if len(res.Errors) > 0 {
			f.Errors = res.Errors
		}
		b, err := json.MarshalIndent(f, "", "  ")
		if err != nil {
			return err
		}
		if err := atomicfile.WriteFile(fortioPath, append(b, '\n')); err != nil {
			return fmt.Errorf("load: --fortio-json: %w", err)
		}
	}
	return nil
}
