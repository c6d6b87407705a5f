package spec

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// A spec survives JSON unchanged, with its durations written as people
// write them.
func TestJSONRoundTrip(t *testing.T) {
	limit := 5.0
	s := Spec{
		Engine: "mariadb", DSN: "root@tcp(127.0.0.1:3306)/x", Standby: "sync", StandbyDelay: time.Millisecond,
		Workload: "replay", Params: map[string]int{"batch": 100},
		Replay:    Replay{Capture: "c.obsc", Mode: "sync", Speed: 2, Passes: 1},
		Observers: []string{"general-log-file"}, Method: "auto", Rounds: 6,
		Duration: 8 * time.Second, Warmup: 2 * time.Second,
		Alternation: Alternation{Duration: time.Minute, PhaseMin: 2, PhaseMax: 4, Reps: 1},
		MaxTime:     30 * time.Minute, Clients: 16, Sessions: []int{1, 2}, DriverThreads: 1,
		Waits: 10 * time.Millisecond, Counters: true, Seed: 42, OnFailure: "stop", Format: "json",
		MaxOverhead: &limit, Out: "dir", Study: "sync-commit",
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"duration":"8s"`, `"waits":"10ms"`, `"max_time":"30m0s"`, `"standby_delay":"1ms"`, `"alternation":{"duration":"1m0s"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
	var back Spec
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, s) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, s)
	}
}

// A recorded duration that is not one is an error naming the setting.
func TestBadDuration(t *testing.T) {
	var s Spec
	err := json.Unmarshal([]byte(`{"engine":"postgres","duration":"soon"}`), &s)
	if err == nil || !strings.Contains(err.Error(), "duration") {
		t.Errorf("Unmarshal = %v; want an error naming duration", err)
	}
}

// kernel_waits is recorded either way; a spec recorded before it existed
// keeps the /proc look-up it ran with.
func TestKernelWaitsRecorded(t *testing.T) {
	for _, tc := range []struct {
		json string
		want bool
	}{
		{`{"engine":"postgres"}`, true},
		{`{"engine":"postgres","kernel_waits":false}`, false},
		{`{"engine":"postgres","kernel_waits":true}`, true},
	} {
		var s Spec
		if err := json.Unmarshal([]byte(tc.json), &s); err != nil || s.KernelWaits != tc.want {
			t.Errorf("%s: KernelWaits %v, %v; want %v", tc.json, s.KernelWaits, err, tc.want)
		}
	}
}

// --load reads one percentage or an ascending list, and refuses the rest
// by name.
func TestParseLoads(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []float64
		err  string
	}{
		{"50", []float64{50}, ""},
		{"25,50,75%,90", []float64{25, 50, 75, 90}, ""},
		{"0", nil, `"0" is not a percentage`},
		{"120", nil, `"120" is not a percentage`},
		{"50,25", nil, "ascending"},
		{"x", nil, `"x" is not a percentage`},
		{",", nil, "give a percentage"},
	} {
		got, err := ParseLoads(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseLoads(%q) = %v, %v; want an error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) || FormatLoads(got) != strings.ReplaceAll(tc.in, "%", "") {
			t.Errorf("ParseLoads(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}
