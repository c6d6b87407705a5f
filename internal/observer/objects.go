package observer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
)

// Some engines' observers are objects obsbench creates rather than
// settings it changes (a session, a trace), each written as a section of
// its own in a catalog entry. The engine owns the section: it registers
// the section's key with a type to decode it into (Section), and that
// type checks and describes itself (Object). This package knows the
// sections only as the registry gives them.

// Section is a catalog section only one engine's observers are written
// in: a key of an entry beside settings and events, whose value is
// decoded into the engine's own type.
type Section struct {
	// Key is the section's key in an entry, and in the observer's JSON.
	Key string
	// Label says what the section is, in errors: "key: (what it is)".
	Label string
	// EventsSource says the section is also an events source: events
	// with source Key count what the section's object recorded.
	EventsSource bool
	// New returns a new zero object, a pointer the section's value is
	// decoded into.
	New func() Object
}

// Object is the value of an engine-owned section: an object the engine
// creates for the observer, or a setting of one it switches.
type Object interface {
	// Check applies the engine's rules of the object alone, when the
	// observer is parsed; an error points at the section's key.
	Check() error
	// Summary is the object in a few words, as the observer's Summary
	// writes them.
	Summary() string
}

// Objects are an observer's engine-owned sections, by key.
type Objects map[string]Object

// entryFields are the keys of Observer's own fields in an entry.
var entryFields = sync.OnceValue(func() map[string]bool {
	fields := map[string]bool{}
	t := reflect.TypeFor[Observer]()
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); name != "" && name != "-" {
			fields[name] = true
		}
	}
	return fields
})

// decodeEntry reads one catalog entry: its engine-owned sections into
// their engines' types, the rest into Observer's fields.
func decodeEntry(node ast.Node) (Observer, error) {
	var o Observer
	rest, objects, err := decodeObjects(node)
	if err != nil {
		return o, err
	}
	if rest != nil {
		if err := yaml.NodeToValue(rest, &o, yaml.DisallowUnknownField()); err != nil {
			return o, err
		}
	}
	o.Objects = objects
	return o, nil
}

// decodeObjects takes the engine-owned sections out of an entry, decoded,
// and returns the entry without them (nil: nothing is left). A key that
// is no field and no registered engine's section stays in the entry, an
// unknown field, unless the entry is for an engine this binary does not
// have: then the key may be that engine's section, and it is kept as
// written (unread), never checked.
func decodeObjects(entry ast.Node) (ast.Node, Objects, error) {
	node := entry
	if a, ok := node.(*ast.AnchorNode); ok {
		node = a.Value
	}
	values := mappingValues(node)
	if len(values) == 0 {
		return entry, nil, nil
	}
	engine := entryEngine(node)
	_, known := rulesOf(engine)
	var objects Objects
	kept := make([]*ast.MappingValueNode, 0, len(values))
	for _, kv := range values {
		key := keyName(kv)
		if entryFields()[key] || kv.Key.IsMergeKey() {
			kept = append(kept, kv)
			continue
		}
		obj, read, err := decodeObject(engine, known, key, kv.Value)
		switch {
		case err != nil:
			return nil, nil, err
		case !read:
			kept = append(kept, kv)
		case obj != nil:
			if objects == nil {
				objects = Objects{}
			}
			objects[key] = obj
		}
	}
	if m, ok := node.(*ast.MappingNode); ok {
		rest := *m
		rest.Values = kept
		return &rest, objects, nil
	}
	if len(kept) == 0 {
		return nil, objects, nil
	}
	return entry, objects, nil
}

// decodeObject decodes the section key of an entry for engine (known:
// registered here). read is false for a key that is nobody's section; a
// null section is read and is no object.
func decodeObject(engine string, known bool, key string, value ast.Node) (obj Object, read bool, err error) {
	s, owned := sectionFor(engine, key)
	if !owned && known {
		return nil, false, nil
	}
	if value == nil || value.Type() == ast.NullType {
		return nil, true, nil
	}
	if !owned {
		var v any
		err := yaml.NodeToValue(value, &v)
		return unread{key, v}, true, err
	}
	obj = s.New()
	return obj, true, yaml.NodeToValue(value, obj, yaml.DisallowUnknownField())
}

// keyName is a mapping key as the decoder reads it: a quoted key's text.
func keyName(kv *ast.MappingValueNode) string {
	if s, ok := kv.Key.(*ast.StringNode); ok {
		return s.Value
	}
	return kv.Key.String()
}

// entryEngine is the engine an entry names, "" if none.
func entryEngine(node ast.Node) string {
	var engine string
	for _, kv := range mappingValues(node) {
		if keyName(kv) == "engine" {
			_ = yaml.NodeToValue(kv.Value, &engine) // a bad one is reported with the entry's other fields
		}
	}
	return engine
}

func mappingValues(node ast.Node) []*ast.MappingValueNode {
	switch n := node.(type) {
	case *ast.MappingNode:
		return n.Values
	case *ast.MappingValueNode:
		return []*ast.MappingValueNode{n}
	}
	return nil
}

// unread is a section of an observer whose engine this binary does not
// have, as written: nothing here can read or check it, and such an
// observer is never applied.
type unread struct {
	key   string
	value any
}

func (unread) Check() error { return nil }

func (u unread) Summary() string { return u.key + ": (not read by this binary)" }

func (u unread) MarshalJSON() ([]byte, error) { return json.Marshal(u.value) }

// objectKeys are the keys of o's objects: in the registry's order of
// sections, then any other sorted.
func (o Observer) objectKeys() []string {
	if len(o.Objects) == 0 {
		return nil
	}
	var keys []string
	for _, s := range allSections() {
		if _, ok := o.Objects[s.Key]; ok {
			keys = append(keys, s.Key)
		}
	}
	var others []string
	for k := range o.Objects {
		if !slices.Contains(keys, k) {
			others = append(others, k)
		}
	}
	sort.Strings(others)
	return append(keys, others...)
}

// checkObjects runs each object's own check.
func checkObjects(o Observer) (string, error) {
	for _, k := range o.objectKeys() {
		if err := o.Objects[k].Check(); err != nil {
			return k, err
		}
	}
	return "", nil
}

// plainObserver is Observer without its JSON methods.
type plainObserver Observer

// MarshalJSON writes o as its fields' tags say, with each object under
// its section's key where a field of its own would be: after sink,
// before events and source, which are Observer's last fields.
func (o Observer) MarshalJSON() ([]byte, error) {
	head := plainObserver(o)
	head.Events, head.Source = nil, ""
	b, err := json.Marshal(head)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Write(bytes.TrimSuffix(b, []byte("}")))
	add := func(key string, v any) error {
		value, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		k, _ := json.Marshal(key)
		buf.WriteByte(',')
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(value)
		return nil
	}
	for _, k := range o.objectKeys() {
		if err := add(k, o.Objects[k]); err != nil {
			return nil, err
		}
	}
	if o.Events != nil {
		if err := add("events", o.Events); err != nil {
			return nil, err
		}
	}
	if o.Source != "" {
		if err := add("source", o.Source); err != nil {
			return nil, err
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// UnmarshalJSON reads what MarshalJSON writes; a section no registered
// engine owns is ignored, as any unknown key.
func (o *Observer) UnmarshalJSON(b []byte) error {
	var p plainObserver
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return err
	}
	for k, raw := range keys {
		s, ok := sectionFor(p.Engine, k)
		if !ok || string(raw) == "null" {
			continue
		}
		obj := s.New()
		if err := json.Unmarshal(raw, obj); err != nil {
			return fmt.Errorf("observer %s: %s: %w", p.Name, k, err)
		}
		if p.Objects == nil {
			p.Objects = Objects{}
		}
		p.Objects[k] = obj
	}
	*o = Observer(p)
	return nil
}
