package spec

import (
	"errors"
	"fmt"
	"strings"

	"github.com/obsbench/obsbench/internal/engine"
)

// InvalidError is input that cannot make an experiment: a flag's value, a
// file, a server's address. Nothing was started or changed when it is
// returned, so a caller may say so (the command exits 2).
type InvalidError struct{ Err error }

func (e InvalidError) Error() string { return e.Err.Error() }
func (e InvalidError) Unwrap() error { return e.Err }

// Invalidf is an InvalidError.
func Invalidf(format string, args ...any) error { return InvalidError{fmt.Errorf(format, args...)} }

// OneOf names choices the way an error or a flag's help lists them: "a",
// "a or b", "a, b or c".
func OneOf[S ~string](choices []S) string {
	names := Names(choices)
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Names are the values of a setting's type as text, for help, errors and
// completion.
func Names[S ~string](values []S) []string {
	names := make([]string, len(values))
	for i, v := range values {
		names[i] = string(v)
	}
	return names
}

// FromEngine turns an engine's refusal of its input into an
// InvalidError that names the option it came from: flag, the option
// that gave the server's address (--dsn, --twin-dsn), or --engine for
// an engine that is not registered. A refusal to restart, or to provide
// a sink, on a server obsbench does not manage says to run without flag.
// Engines know no option names. Other errors are returned as they are.
func FromEngine(err error, flag string) error {
	var addr *engine.AddressError
	var none *engine.NoManagedError
	var na *engine.UnavailableError
	var unknown *engine.UnknownError
	var restart *engine.RestartError
	var sink *engine.SinkError
	switch {
	case errors.As(err, &unknown):
		return Invalidf("--engine %q is not supported; valid: %s", unknown.Name, strings.Join(unknown.Known, ", "))
	case errors.As(err, &restart), errors.As(err, &sink) && sink.Unsupported == "":
		return fmt.Errorf("%w (run without %s)", err, flag)
	case errors.As(err, &addr):
		return Invalidf("%s: %v", flag, addr.Err)
	case errors.As(err, &none):
		return Invalidf("--engine %s needs %s %s: %s", none.Engine, flag, none.DSNForm, none.Why)
	case errors.As(err, &na):
		return InvalidError{Err: na.Err}
	}
	return err
}
