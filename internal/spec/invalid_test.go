package spec

import "testing"

func TestOneOf(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"a"}, "a"},
		{[]string{"a", "b"}, "a or b"},
		{[]string{"a", "b", "c"}, "a, b or c"},
	} {
		if got := OneOf(tc.in); got != tc.want {
			t.Errorf("OneOf(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}
