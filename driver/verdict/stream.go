package verdict

import (
	"context"
	"sync"
	"time"
)

// StreamOptions describe an attack stream: Rate attacks per second in
// total over Workers concurrent senders, each attack on a new connection,
// at most Max attacks (0 = 100000), each waiting at most Timeout.
type StreamOptions struct {
	Target  string
	Rate    float64
	Workers int
	Max     int
	Timeout time.Duration
}

// Stream is a running attack stream; Stop ends it and returns the answers.
type Stream struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	counts map[string]int64
}

// StartStream starts sending raw as opts says until Stop (or ctx ends).
// Every attack's answer is counted by its label (a status, or refused,
// reset, timeout). It is a second, independent generator beside a
// driver/load run: it shares nothing with it but the target.
func StartStream(ctx context.Context, opts StreamOptions, raw []byte) *Stream {
	if opts.Workers < 1 {
		opts.Workers = 1
	}
	if opts.Max <= 0 {
		opts.Max = 100000
	}
	if opts.Rate <= 0 {
		opts.Rate = 10
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &Stream{cancel: cancel, counts: map[string]int64{}}
	every := time.Duration(float64(time.Second) * float64(opts.Workers) / opts.Rate)
	per := (opts.Max + opts.Workers - 1) / opts.Workers
	for w := 0; w < opts.Workers; w++ {
		s.wg.Add(1)
		go func(w int) {
			defer s.wg.Done()
			start := time.Now().Add(time.Duration(w) * every / time.Duration(opts.Workers))
			for i := 0; i < per; i++ {
				due := start.Add(time.Duration(i) * every)
				if d := time.Until(due); d > 0 {
					t := time.NewTimer(d)
					select {
					case <-ctx.Done():
						t.Stop()
						return
					case <-t.C:
					}
				}
				if ctx.Err() != nil {
					return
				}
				a := Probe(ctx, opts.Target, raw, opts.Timeout)
				if ctx.Err() != nil && a.Status == 0 {
					return // ended by Stop, not answered
				}
				s.mu.Lock()
				s.counts[a.Label()]++
				s.mu.Unlock()
			}
		}(w)
	}
	return s
}

// Stop ends the stream, waits for its senders and returns the answers by
// label.
func (s *Stream) Stop() map[string]int64 {
	s.cancel()
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int64, len(s.counts))
	for k, v := range s.counts {
		out[k] = v
	}
	return out
}
