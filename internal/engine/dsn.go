package engine

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// passwordField matches password=... in a libpq keyword/value string,
// quoted or not.
var passwordField = regexp.MustCompile(`(?i)\bpassword\s*=\s*('([^'\\]|\\.)*'|\S+)\s*`)

// RedactDSN removes the password from a DSN, in either form, so that it
// can be printed, logged or journaled.
func RedactDSN(dsn string) string {
	if IsMySQLDSN(dsn) {
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			return "(unparsable DSN)"
		}
		cfg.Passwd = ""
		return cfg.FormatDSN()
	}
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

// IsMySQLDSN tells a go-sql-driver/mysql DSN (user:pw@tcp(host:3306)/db)
// from libpq's forms.
func IsMySQLDSN(dsn string) bool {
	return !strings.Contains(dsn, "://") && strings.Contains(dsn, "@") && strings.Contains(dsn, "(")
}
