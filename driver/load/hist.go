package load

import (
	"fmt"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Latency histogram range: 1 µs to 60 s at 3 significant figures; the
// histograms of a window's slots (Options.SlotEvery) keep 2, so that an
// hour of 10-s slots on 1024 connections stays within a few hundred MiB.
const (
	histMinUs      = 1
	histMaxUs      = 60_000_000
	histDigits     = 3
	slotHistDigits = 2
)

// maxSlots bounds the slots of one window (Options.SlotEvery).
const maxSlots = 3600

// NewHistogram returns an empty latency histogram in microseconds with the
// range every histogram of this package uses (1 µs to 60 s, 3 significant
// figures), so that they can be merged without loss.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(histMinUs, histMaxUs, histDigits)
}

// newSlotHistogram is the histogram of one slot of a window.
func newSlotHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(histMinUs, histMaxUs, slotHistDigits)
}

// Merge returns a new histogram holding every value of hists. Nil entries
// are skipped.
func Merge(hists ...*hdrhistogram.Histogram) *hdrhistogram.Histogram {
	out := NewHistogram()
	for _, h := range hists {
		if h != nil {
			out.Merge(h)
		}
	}
	return out
}

// EncodeHist returns r.Hist in HdrHistogram's compressed V2 encoding, as
// base64 text (the form other HdrHistogram tools read).
func (r *Result) EncodeHist() (string, error) { return EncodeHistogram(r.Hist) }

// EncodeHistogram returns h in HdrHistogram's compressed V2 encoding, as
// base64 text (what DecodeHist reads).
func EncodeHistogram(h *hdrhistogram.Histogram) (string, error) {
	if h == nil {
		return "", fmt.Errorf("encode histogram: no histogram")
	}
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("encode histogram: %w", err)
	}
	return string(b), nil
}

// DecodeHist decodes a histogram written by Result.EncodeHist.
func DecodeHist(s string) (*hdrhistogram.Histogram, error) {
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	return h, nil
}
