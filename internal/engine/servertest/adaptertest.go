// The steps that the tests of the engine adapters (postgres, mariadb,
// sqlserver) take alike on a real server: reading the catalog, opening a
// session, applying and reverting an observer, counting its events,
// sampling waits, and whole checks every adapter runs (DSSMix). Each
// helper fails the test that calls it as the test itself would; what
// differs between the engines (their SQL, their own checks) stays in
// their tests.

package servertest

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/result"
)

// Catalog returns the built-in observer catalog.
func Catalog(t testing.TB) *observer.Catalog {
	t.Helper()
	cat, err := observer.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// CatalogObserver returns the built-in observer name of engine.
func CatalogObserver(t testing.TB, engine, name string) observer.Observer {
	t.Helper()
	o, err := Catalog(t).Lookup(engine, name)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// WithSetting returns o with setting name set to value, o's own settings
// map left as it was.
func WithSetting(o observer.Observer, name, value string) observer.Observer {
	o.Settings = maps.Clone(o.Settings)
	if o.Settings == nil {
		o.Settings = map[string]string{}
	}
	o.Settings[name] = value
	return o
}

// EventObservers returns the built-in observers of engine that count
// events, and reports an error unless there are at least atLeast of them.
func EventObservers(t testing.TB, engine string, atLeast int) []observer.Observer {
	t.Helper()
	var counted []observer.Observer
	for _, o := range Catalog(t).All(engine) {
		if o.Events != nil {
			counted = append(counted, o)
		}
	}
	if len(counted) < atLeast {
		t.Errorf("%d observers with event counters; want at least %d", len(counted), atLeast)
	}
	return counted
}

// Applier is an adapter's server as Apply uses it.
type Applier interface {
	Apply(ctx context.Context, o observer.Observer) (engine.Applied, error)
}

// Apply applies o on s and returns it with the function that reverts it
// (to defer), which reports a failed Revert as an error of t.
func Apply(t testing.TB, s Applier, o observer.Observer) (a engine.Applied, revert func()) {
	t.Helper()
	ctx := context.Background()
	a, err := s.Apply(ctx, o)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	return a, func() {
		t.Helper()
		if err := a.Revert(ctx); err != nil {
			t.Errorf("Revert: %v", err)
		}
	}
}

// ApplyForTest applies the built-in observer name of engine on s for the
// rest of a test that checks what it puts in force: it is reverted when
// the test ends, and whether that succeeds is not the test's concern.
func ApplyForTest(t testing.TB, s Applier, engine, name string) {
	t.Helper()
	a, err := s.Apply(context.Background(), CatalogObserver(t, engine, name))
	if err != nil {
		t.Fatalf("Apply %s: %v", name, err)
	}
	t.Cleanup(func() { a.Revert(context.Background()) })
}

// SettingsApplier is an adapter's server as ApplyThenRevert uses it.
type SettingsApplier interface {
	Applier
	Settings(ctx context.Context) (map[string]string, error)
}

// ApplyThenRevert reads s's settings, applies o, calls inForce with it
// (the caller's checks of what o put in force), reverts o and reads the
// settings again: before and after, for the caller to compare.
func ApplyThenRevert(t testing.TB, s SettingsApplier, o observer.Observer, inForce func(engine.Applied)) (before, after map[string]string) {
	t.Helper()
	ctx := context.Background()
	before, err := s.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Apply(ctx, o)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	inForce(a)
	if err := a.Revert(ctx); err != nil {
		t.Fatalf("Revert: %v", err)
	}
	if after, err = s.Settings(ctx); err != nil {
		t.Fatal(err)
	}
	return before, after
}

// SettingsRestored reports each setting of before that after holds at
// another value: what a Revert left changed.
func SettingsRestored(t testing.TB, before, after map[string]string) {
	t.Helper()
	for k, v := range before {
		if after[k] != v {
			t.Errorf("after Revert %s = %q; want %q", k, after[k], v)
		}
	}
}

// Splitter is an adapter's server as SplitMatchesStatic uses it.
type Splitter interface {
	Split(ctx context.Context, o observer.Observer) (held, switched observer.Observer, err error)
}

// SplitMatchesStatic checks that what `observers -v` says without a
// server (static, from the documentation) is what s.Split says on the
// server, for every built-in observer of engine: the same settings held
// and switched (their names: a sink's directory is filled in on the
// server only) and the same libraries held.
func SplitMatchesStatic(t testing.TB, s Splitter, engine string, static func(observer.Observer) (held, switched observer.Observer)) {
	t.Helper()
	for _, o := range Catalog(t).All(engine) {
		held, sw, err := s.Split(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		sheld, ssw := static(o)
		if !reflect.DeepEqual(slices.Sorted(maps.Keys(held.Settings)), slices.Sorted(maps.Keys(sheld.Settings))) ||
			!reflect.DeepEqual(slices.Sorted(maps.Keys(sw.Settings)), slices.Sorted(maps.Keys(ssw.Settings))) || !reflect.DeepEqual(held.Preload, sheld.Preload) {
			t.Errorf("%s: on the server held %v, switched %v; without it held %v, switched %v", o.Name, held.Settings, sw.Settings, sheld.Settings, ssw.Settings)
		}
	}
}

// RecordedAsItShould says whether o recorded what it should of the
// executed statements: every one, or for an observer that samples them
// (events sampled:), a count within the interval a binomial sample of its
// rate falls in 999 times in 1,000; want says what that was.
func RecordedAsItShould(o observer.Observer, got, executed int64) (ok bool, want string) {
	if o.Events == nil || o.Events.Sampled == 0 {
		return got == executed && got > 0, fmt.Sprintf("%d (statements executed)", executed)
	}
	e := result.Events{Recorded: got, Executed: executed, SampleRate: o.Events.Sampled}
	lo, hi, outside := e.OutsideSample()
	return executed > 0 && !outside, fmt.Sprintf("%d-%d (a sample of %g of %d executed)", lo, hi, o.Events.Sampled, executed)
}
