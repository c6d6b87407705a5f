package server

import (
	"crypto/rand"
	"fmt"
	"os"
	"strings"
)

// Every managed server authenticates every connection, also from this
// machine: a server that trusted loopback would let any local account in
// as its superuser for the length of a run, and a superuser runs commands
// as the server's OS user (COPY ... TO PROGRAM). Each server gets a random
// password of its own, kept in files of its private directory (0700, the
// server's OS user's): libpq's password file for PostgreSQL, a client
// option file for MariaDB. It is never printed, never on a command line
// (which every account can read in /proc), and never in a DSN's text.

// NewPassword is a random password: 26 characters of [A-Z2-7] (128 bits),
// which need no quoting in SQL literals, option files or a libpq password
// file.
func NewPassword() string { return rand.Text() }

// WritePrivate writes a file readable by its owner only, owned by uid and
// gid (the server's OS user, which reads it too; -1 keeps ours).
func WritePrivate(path, content string, uid, gid int) error {
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		return err
	}
	if uid >= 0 && uid != os.Geteuid() {
		if err := os.Chown(path, uid, gid); err != nil {
			return fmt.Errorf("hand %s to the server's user: %w", path, err)
		}
	}
	return nil
}

// Redact replaces every secret in s, for error messages that quote a
// command's input or output.
func Redact(s string, secrets ...string) string {
	for _, x := range secrets {
		if x != "" {
			s = strings.ReplaceAll(s, x, "********")
		}
	}
	return s
}
