package result

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"testing"
)

// recordKeys are raw.jsonl's top-level keys, in the order Record writes
// them. Every committed run is read by these names: a grouping of Record's
// fields that renamed, hid or nested one would change this list.
var recordKeys = []string{
	"trial", "repeat", "position", "mode", "build", "workload", "conns", "load", "conn_mode", "downstream",
	"streams", "shard",
	"envoy_version", "envoy_sha256", "envoy_concurrency",
	"rate_requested_per_s", "arrival", "arrival_seed", "load_fraction", "capacity_per_s", "late",
	"client_lagged", "client_stalled", "due", "behind_rate", "send",
	"warmup_s", "duration_s", "interrupted", "expect_status", "declared_status", "verdict_probe_ms",
	"request_bytes", "requests", "warmup_errors", "errors", "statuses", "req_per_s", "rate_achieved_per_s",
	"latency", "hist_b64", "per_second",
	"attacks", "attack_workload", "attack_expect",
	"rss_series_kib", "cpu_series_us", "wait_series_us", "steal_series_us", "allocator_start", "allocator_end", "latency_slots",
	"slow", "classes", "max_rate", "instructions", "sidecar",
	"envoy_cpu", "envoy_memory", "envoy_startup", "preflight", "affinity_observed", "stats_file", "perf_file",
	"error",
}

// zeroRecordKeys are the keys a zero Record still writes: those without
// omitempty.
var zeroRecordKeys = []string{
	"trial", "repeat", "position", "mode", "workload", "conns", "load", "rate_requested_per_s",
	"warmup_s", "duration_s", "expect_status", "requests", "req_per_s", "rate_achieved_per_s", "latency",
	"per_second", "envoy_cpu", "envoy_memory",
}

func TestRecordKeys(t *testing.T) {
	var full Record
	fill(reflect.ValueOf(&full).Elem())
	for _, tc := range []struct {
		name string
		rec  Record
		want []string
	}{
		{name: "every field set", rec: full, want: recordKeys},
		{name: "zero record", rec: Record{}, want: zeroRecordKeys},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.rec)
			if err != nil {
				t.Fatal(err)
			}
			got := topLevelKeys(t, b)
			if !slices.Equal(got, tc.want) {
				t.Errorf("raw.jsonl keys changed:\ngot  %q\nwant %q", got, tc.want)
			}
			var back Record
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, tc.rec) {
				t.Errorf("a record does not read back as written:\ngot  %+v\nwant %+v", back, tc.rec)
			}
		})
	}
}

// TestRecordFieldCount keeps Record small: a new feature adds a group, not
// fields.
func TestRecordFieldCount(t *testing.T) {
	const maxFields = 25
	if got := reflect.TypeFor[Record]().NumField(); got > maxFields {
		t.Errorf("Record has %d top-level fields, want at most %d: group a feature's fields in a struct of their own", got, maxFields)
	}
}

// topLevelKeys returns the keys of the JSON object b in their order.
func topLevelKeys(t *testing.T, b []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil { // {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// fill sets every exported field under v to a non-zero value.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0))
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k)
		fill(e)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(2)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(2)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5)
	}
}
