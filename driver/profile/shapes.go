package profile

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Body shapes a workload can generate (Body.Shape). Each is deterministic:
// the same size or argument count gives the same bytes on every machine.
const (
	// ShapeJSONValue is the seed's single-value JSON, {"message":"ccc…"}:
	// one long string of one character, the worst case for backtracking
	// regular expressions and not what APIs send.
	shapeJSONValue = "json_value"
	// ShapeJSONReal is an API-style payload: an envelope with a page object
	// and an array of item objects, each with short fields (numbers,
	// booleans, a tag array, a nested object, a short description). Items
	// are added up to RealItemsMax (about 900 JSON leaves, under the
	// engines' 1000-argument limit); beyond that the descriptions grow.
	shapeJSONReal = "json_real"
	// ShapeForm is a url-encoded form of Body.Args short fields.
	shapeForm = "form"
	// ShapeMultipart is multipart/form-data with a text field and one file
	// part (a CSV file) filled to the size.
	shapeMultipart = "multipart"
)

// realItemsMax is the most items ShapeJSONReal generates. With 10 leaves an
// item and 5 in the envelope it stays under the 1000 arguments the engines
// inspect (internal/crs MaxArguments); more would be denied with 400.
const realItemsMax = 90

// multipartBoundary is the boundary of ShapeMultipart bodies.
const multipartBoundary = "wafbenchBoundary7MA4YWxkTrZu0gW"

// shapes lists every shape and its Content-Type.
var shapes = map[string]string{
	shapeJSONValue: "application/json",
	shapeJSONReal:  "application/json",
	shapeForm:      "application/x-www-form-urlencoded",
	shapeMultipart: "multipart/form-data; boundary=" + multipartBoundary,
}

// words is the vocabulary of generated text: ordinary words that no CRS
// rule at paranoia level 1 treats as an attack (no SQL, shell or script
// keywords, no metacharacters).
var words = []string{"quiet", "harbor", "morning", "garden", "yellow", "river", "paper", "window",
	"simple", "travel", "orange", "castle", "summer", "pencil", "forest", "silver", "market",
	"bridge", "cotton", "meadow", "copper", "little", "violet", "autumn", "basket", "candle"}

// text is n bytes of words separated by spaces, starting at word seed.
func text(n, seed int) string {
	var b strings.Builder
	b.Grow(n + 8)
	for i := seed; b.Len() < n; i++ {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[i%len(words)])
	}
	return b.String()[:n]
}

// minShapeSize is the smallest non-empty body of a size-driven shape.
func minShapeSize(shape string) int {
	switch shape {
	case shapeJSONValue:
		return len(jsonValue(0)) // {"message":""}
	case shapeJSONReal:
		return len(realEnvelope(0, nil, ""))
	case shapeMultipart:
		return len(multipartBody(""))
	}
	return 0
}

// shapeBody generates the body of a shape: size bytes exactly (0 = empty)
// for the size-driven shapes, args fields for ShapeForm.
func shapeBody(shape string, size, args int) ([]byte, error) {
	if shape == shapeForm {
		return form(args), nil
	}
	if size == 0 {
		return nil, nil
	}
	if m := minShapeSize(shape); size < m {
		return nil, fmt.Errorf("shape %s: size %d is below its smallest body (%d bytes)", shape, size, m)
	}
	var b []byte
	switch shape {
	case shapeJSONValue:
		b = jsonValue(size - minShapeSize(shape))
	case shapeJSONReal:
		b = jsonReal(size)
	case shapeMultipart:
		b = multipartBody(csv(size - minShapeSize(shape)))
	default:
		return nil, fmt.Errorf("unknown shape %q", shape)
	}
	if len(b) != size {
		return nil, fmt.Errorf("shape %s: generated %d bytes for size %d", shape, len(b), size)
	}
	return b, nil
}

func jsonValue(fill int) []byte {
	return []byte(`{"message":"` + strings.Repeat("c", fill) + `"}`)
}

// realItem is item i of ShapeJSONReal with a description of desc bytes.
func realItem(i, desc int) string {
	w := func(k int) string { return words[(i*7+k)%len(words)] }
	return `{"id":` + strconv.Itoa(1001+i) +
		`,"sku":"SKU-` + fmt.Sprintf("%05d", 17*i+3) + `"` +
		`,"name":"` + w(0) + " " + w(1) + `"` +
		`,"price":` + strconv.Itoa(5+i%40) + "." + strconv.Itoa(i%10) + "9" +
		`,"in_stock":` + strconv.FormatBool(i%3 != 0) +
		`,"tags":["` + w(2) + `","` + w(3) + `"]` +
		`,"dims":{"w":` + strconv.Itoa(10+i%17) + `,"h":` + strconv.Itoa(20+i%23) + `}` +
		`,"description":"` + text(desc, i) + `"}`
}

// realDesc is the base description length of items before they grow.
const realDesc = 32

func realEnvelope(n int, items []string, note string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"request_id":"req-4711","page":{"number":1,"size":` + strconv.Itoa(n) + `},"items":[`)
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(it)
	}
	b.WriteString(`],"note":"` + note + `"}`)
	return b.Bytes()
}

// jsonReal fills size bytes: items of the base description length while
// they fit (up to RealItemsMax), then longer descriptions, then the note.
func jsonReal(size int) []byte {
	var items []string
	used := len(realEnvelope(0, nil, ""))
	for len(items) < realItemsMax {
		it := realItem(len(items), realDesc)
		extra := len(it) + 1
		if len(items) == 0 {
			extra = len(it)
		}
		// page.size grows with the item count: one more digit at 10.
		digits := len(strconv.Itoa(len(items)+1)) - len(strconv.Itoa(len(items)))
		if used+extra+digits > size {
			break
		}
		items = append(items, it)
		used += extra + digits
	}
	n := len(items)
	rest := size - used
	if n == realItemsMax && rest >= n {
		grow := rest / n
		for i := range items {
			items[i] = realItem(i, realDesc+grow)
		}
		rest -= grow * n
	}
	return realEnvelope(n, items, text(rest, 5))
}

func form(args int) []byte {
	var b bytes.Buffer
	for i := 1; i <= args; i++ {
		if i > 1 {
			b.WriteByte('&')
		}
		b.WriteString("field" + strconv.Itoa(i) + "=" + words[i%len(words)] + "-" + strconv.Itoa(i))
	}
	return b.Bytes()
}

// csv is n bytes of a small CSV file.
func csv(n int) string {
	var b strings.Builder
	b.Grow(n + 40)
	b.WriteString("id,name,quantity\n")
	for i := 1; b.Len() < n; i++ {
		b.WriteString(strconv.Itoa(i) + "," + words[i%len(words)] + "," + strconv.Itoa(i%13+1) + "\n")
	}
	return b.String()[:n]
}

func multipartBody(file string) []byte {
	const crlf = "\r\n"
	return []byte("--" + multipartBoundary + crlf +
		`Content-Disposition: form-data; name="title"` + crlf + crlf +
		"Quarterly stock report" + crlf +
		"--" + multipartBoundary + crlf +
		`Content-Disposition: form-data; name="upload"; filename="stock.csv"` + crlf +
		"Content-Type: text/csv" + crlf + crlf +
		file + crlf +
		"--" + multipartBoundary + "--" + crlf)
}
