package load

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Class is one request class of a weighted mix: its request (with its own
// expected status) and its integer weight.
type Class struct {
	Request
	Weight int // relative share of the requests, ≥ 1
}

// MaxMixWeight bounds the sum of a mix's weights: the class sequence every
// connection walks is that long.
const MaxMixWeight = 10000

// classResult is what a mix's window measured for one class. Errors and
// Statuses are keyed as in Result; a status other than the class's own
// ExpectStatus is an error of that class.
type classResult struct {
	Name         string
	Weight       int
	ExpectStatus int
	Requests     int64 // valid responses (status == ExpectStatus)
	Errors       map[string]int64
	Statuses     map[int]int64
	Hist         *hdrhistogram.Histogram
}

// classReq is a class as the workers use it.
type classReq struct {
	raw    []byte
	head   bool
	expect int
	h2     h2req // HTTP/2 trials: raw converted (prepareH2)
}

// checkClasses validates a mix.
func checkClasses(classes []Class) error {
	if len(classes) == 0 {
		return fmt.Errorf("mix: want at least one class")
	}
	if len(classes) > 255 {
		return fmt.Errorf("mix: want at most 255 classes, got %d", len(classes))
	}
	sum := 0
	for i, c := range classes {
		name := c.Name
		if name == "" {
			name = "#" + strconv.Itoa(i+1)
		}
		if len(c.Raw) == 0 {
			return fmt.Errorf("request %q: raw: empty", name)
		}
		if c.ExpectStatus < 100 || c.ExpectStatus > 599 {
			return fmt.Errorf("request %q: expect_status: want 100..599, got %d", name, c.ExpectStatus)
		}
		if c.Weight < 1 {
			return fmt.Errorf("request %q: weight: want ≥ 1, got %d", name, c.Weight)
		}
		sum += c.Weight
	}
	if sum > MaxMixWeight {
		return fmt.Errorf("mix: weights sum to %d, want ≤ %d", sum, MaxMixWeight)
	}
	return nil
}

// sequence returns the order in which the classes are sent: each class i
// appears Weight times, shuffled with seed, so that every full pass over it
// sends the classes in exactly their weights' proportions, interleaved.
// Connection k starts at k·len/Conns, so the connections do not send the
// same class at the same time.
func sequence(classes []Class, seed int64) []uint8 {
	var seq []uint8
	for i, c := range classes {
		for range c.Weight {
			seq = append(seq, uint8(i))
		}
	}
	if len(classes) > 1 {
		r := rand.New(rand.NewPCG(uint64(seed), 0x6d6978)) // "mix"
		r.Shuffle(len(seq), func(i, j int) { seq[i], seq[j] = seq[j], seq[i] })
	}
	return seq
}

func toClassReqs(classes []Class) []classReq {
	out := make([]classReq, len(classes))
	for i, c := range classes {
		out[i] = classReq{raw: c.Raw, head: bytes.HasPrefix(c.Raw, []byte("HEAD ")), expect: c.ExpectStatus}
	}
	return out
}
