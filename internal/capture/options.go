package capture

// The options a capture's logs are read with, checked against the
// source, and the errors of bad input, which name the command's flags.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// InputError is bad input: the flags, or logs that are not what they
// should be. The command reports it as a usage error.
type InputError struct{ Err error }

func (e InputError) Error() string { return e.Err.Error() }
func (e InputError) Unwrap() error { return e.Err }

func invalidf(format string, args ...any) error { return InputError{Err: fmt.Errorf(format, args...)} }

// Option names a read option, for OptionError.
type Option int

const (
	LinePrefixOption Option = iota
	ServerOption
	LanguageOption
)

// flags are the command's flags for each option.
var flags = map[Option]string{LinePrefixOption: "--log-line-prefix", ServerOption: "--dsn", LanguageOption: "--log-language"}

// Flag is the command's flag for read option o: a source's reader names
// it in its hints through this, knowing no flag itself.
func Flag(o Option) string { return flags[o] }

// OptionError is a source's refusal of a read option's value (Err says
// the value and why), or, Failed, its failure to use it (the server could
// not be read).
type OptionError struct {
	Option Option
	Err    error
	Failed bool
}

func (e *OptionError) Error() string { return fmt.Sprintf("%s: %v", flags[e.Option], e.Err) }
func (e *OptionError) Unwrap() error { return e.Err }

// open checks that the options given say how src is read, and prepares
// its reading.
func (o LogOptions) open(ctx context.Context, src Source, files []string) (Opened, error) {
	logs := strings.Join(files, ", ")
	taking := func(takes func(Takes) bool, log func(Source) string) string {
		var of []string
		for _, s := range Sources() {
			if t := log(s); takes(s.Takes) && !slices.Contains(of, t) {
				of = append(of, t)
			}
		}
		return oneOf(of)
	}
	switch {
	case !src.Takes.Server && (o.Read.Server != "" || o.Read.Language != ""):
		return Opened{}, invalidf("--dsn and --log-language say how a %s log is read; %s is %s",
			taking(func(t Takes) bool { return t.Server }, func(s Source) string { return s.Product }), logs, src.Name)
	case !src.Takes.LinePrefix && o.Read.LinePrefix != nil:
		return Opened{}, invalidf("--log-line-prefix says how %s is read; %s is %s",
			taking(func(t Takes) bool { return t.LinePrefix }, func(s Source) string { return s.Product + "'s " + s.Name + " log" }), logs, src.Name)
	}
	opened, err := src.Open(ctx, o.Read)
	var oe *OptionError
	switch {
	case errors.As(err, &oe) && oe.Failed:
		return Opened{}, fmt.Errorf("%s: %w", flags[oe.Option], oe.Err)
	case errors.As(err, &oe):
		return Opened{}, invalidf("%s %v", flags[oe.Option], oe.Err)
	}
	return opened, err
}

// known says source is a registered source's name.
func known(source string) bool {
	_, ok := SourceNamed(source)
	return ok
}

// engineOf is the engine whose server writes source, "" if none does.
func engineOf(source string) string {
	s, _ := SourceNamed(source)
	return s.Engine
}

// Engines are the engines whose logs a capture reads, in their sources'
// order.
func Engines() []string {
	var names []string
	for _, s := range Sources() {
		if !slices.Contains(names, s.Engine) {
			names = append(names, s.Engine)
		}
	}
	return names
}

// howToLog says what makes each product's server log its statements:
// "PostgreSQL: log_statement=all or log_min_duration_statement=0;
// MariaDB: general_log=ON".
func howToLog() string {
	products, hows := byProduct(Sources(), func(s Source) string { return s.HowToLog })
	parts := make([]string, len(products))
	for i, p := range products {
		parts[i] = p + ": " + hows[i][0]
	}
	return strings.Join(parts, "; ")
}

// oneOf lists names as "a, b or c".
func oneOf(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
