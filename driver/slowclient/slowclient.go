// Package slowclient sends one HTTP/1.1 request slowly over a raw loopback
// socket: the head and the body in small pieces with a pause between them,
// optionally stopping part-way through the body and holding the connection
// open, and records what the proxy answered and when. Every send is bounded
// in bytes and in time (Plan.MaxWait).
package slowclient

import (
	"context"
	"fmt"
	"net"
	"time"

	"wafbench/driver/verdict"
)

// Plan says how slowly to send.
type Plan struct {
	HeadChunk int           // bytes of the head per write; 0 = all at once
	BodyChunk int           // bytes of the body per write; 0 = all at once
	Interval  time.Duration // pause between writes
	// StopAfter stops sending after this many body bytes (the declared
	// Content-Length stays): the body times out mid-way. -1 = send all.
	StopAfter int
	MaxWait   time.Duration // the whole exchange's bound; 0 = 10 s
	// OnSent, if set, is called once the last planned byte is written
	// (the signal a caller waits on before sampling the proxy).
	OnSent func()
}

// result is what one slow request got.
type result struct {
	Answer    verdict.Answer
	Sent      int           // bytes written
	Elapsed   time.Duration // from connect to the answer (or giving up)
	EarlyStop bool          // the proxy answered or closed before everything was sent
}

// maxPieces bounds the writes of one request.
const maxPieces = 100000

// Send writes raw (a request serialized by internal/http1, head and body)
// to addr as plan says and reads the answer. headLen is the length of the
// head in raw (through the blank line).
func Send(ctx context.Context, addr string, raw []byte, headLen int, plan Plan) (result, error) {
	if headLen <= 0 || headLen > len(raw) {
		return result{}, fmt.Errorf("slowclient: head length %d outside the request's %d bytes", headLen, len(raw))
	}
	if plan.MaxWait <= 0 {
		plan.MaxWait = 10 * time.Second
	}
	pieces := split(raw[:headLen], plan.HeadChunk)
	body := raw[headLen:]
	if plan.StopAfter >= 0 && plan.StopAfter < len(body) {
		body = body[:plan.StopAfter]
	}
	pieces = append(pieces, split(body, plan.BodyChunk)...)
	if len(pieces) > maxPieces {
		return result{}, fmt.Errorf("slowclient: %d writes, want at most %d", len(pieces), maxPieces)
	}
	start := time.Now()
	d := net.Dialer{Timeout: plan.MaxWait}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return result{}, err
	}
	defer c.Close()
	deadline := start.Add(plan.MaxWait)
	_ = c.SetDeadline(deadline)
	tc := c.(*net.TCPConn)
	_ = tc.SetNoDelay(true)
	// A reader runs beside the writes: the proxy may answer (403, 408,
	// 413) before the request is complete.
	answered := make(chan verdict.Answer, 1)
	go func() { answered <- verdict.ReadAnswer(c) }()
	res := result{}
	for i, p := range pieces {
		if i > 0 && plan.Interval > 0 {
			select {
			case a := <-answered:
				res.Answer, res.EarlyStop, res.Elapsed = a, true, time.Since(start)
				return res, nil
			case <-ctx.Done():
				return res, ctx.Err()
			case <-time.After(plan.Interval):
			}
		}
		n, err := c.Write(p)
		res.Sent += n
		if err != nil {
			res.EarlyStop = true
			break
		}
	}
	if plan.OnSent != nil {
		plan.OnSent()
	}
	select {
	case a := <-answered:
		res.Answer = a
	case <-ctx.Done():
		return res, ctx.Err()
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

func split(b []byte, n int) [][]byte {
	if len(b) == 0 {
		return nil
	}
	if n <= 0 || n >= len(b) {
		return [][]byte{b}
	}
	var out [][]byte
	for len(b) > 0 {
		k := min(n, len(b))
		out = append(out, b[:k])
		b = b[k:]
	}
	return out
}
