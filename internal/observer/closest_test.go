package observer

import "testing"

func TestClosestName(t *testing.T) {
	known := []string{"duration", "dsn", "observers", "observer-file", "warmup", "waits"}
	for _, tt := range []struct{ name, want string }{
		{"duraton", "duration"},
		{"observer", "observers"},
		{"obs", "observers"}, // a prefix
		{"warmpu", "warmup"},
		{"frobnicate", ""},
		{"dns", "dsn"},
	} {
		if got := ClosestName(tt.name, known); got != tt.want {
			t.Errorf("ClosestName(%q) = %q; want %q", tt.name, got, tt.want)
		}
	}
}
