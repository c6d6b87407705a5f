package main

import (
	"net/url"
	"regexp"
	"strings"
)

// passwordField matches password=... in a libpq keyword/value string,
// quoted or not.
var passwordField = regexp.MustCompile(`(?i)\bpassword\s*=\s*('([^'\\]|\\.)*'|\S+)\s*`)

// redactDSN removes the password from a DSN, in either form, so that it
// can be printed, logged or journaled.
func redactDSN(dsn string) string {
	if strings.Contains(dsn, "://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "(unparsable URL)"
		}
		if u.User != nil {
			u.User = url.User(u.User.Username())
		}
		q := u.Query()
		if q.Has("password") {
			q.Del("password")
			u.RawQuery = q.Encode()
		}
		return u.String()
	}
	return strings.TrimSpace(passwordField.ReplaceAllString(dsn, ""))
}
