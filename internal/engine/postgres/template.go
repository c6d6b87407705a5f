package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/obsbench/obsbench/internal/server"
)

// TemplateEnv names the environment variable that, set to a private
// directory, makes managed PostgreSQL servers start from a copy of a
// cluster initdb made once and kept there, instead of running initdb
// each time: for test suites that start many servers (initdb is most of
// a server's start-up). The directory is the caller's to make (mode 0700)
// and remove. A copy has a password of its own, set before the server
// first starts; the template holds only the first server's password's
// SCRAM verifier, readable by the directory's owner only.
const TemplateEnv = "OBSBENCH_INITDB_TEMPLATES"

// initdbArgs are initdb's options after -D: the superuser, the password
// file, SCRAM on every pg_hba.conf line (replication included: no line
// trusts), and the encoding and locale.
func initdbArgs(pwFile string) []string {
	return []string{"-U", "postgres", "--pwfile=" + pwFile,
		"--auth-local=scram-sha-256", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync"}
}

// initCluster makes p's data directory with p's password: a copy of the
// template in dir (TemplateEnv's) when there is one for these binaries,
// else with initdb (which then becomes the template, when dir is given).
func (p *Instance) initCluster(ctx context.Context, uid, gid int, dir string, logf func(string, ...any)) error {
	var tmpl string
	if dir != "" {
		key, err := p.templateKey(uid)
		if err != nil {
			return err
		}
		tmpl = filepath.Join(dir, key)
		if _, err := os.Stat(tmpl); err == nil {
			logf("copying the initdb template %s into %s", tmpl, p.dataDir)
			return p.fromTemplate(ctx, tmpl)
		}
	}
	// initdb reads the password from a file (a command line is visible
	// to every account).
	pwFile := filepath.Join(p.Base, "initdb.pw")
	if err := server.WritePrivate(pwFile, p.password+"\n", uid, gid); err != nil {
		return err
	}
	logf("initdb %s", p.dataDir)
	_, err := p.command(ctx, "initdb", append([]string{"-D", p.dataDir}, initdbArgs(pwFile)...)...)
	os.Remove(pwFile)
	if err != nil || tmpl == "" {
		return err
	}
	return keepTemplate(ctx, p.dataDir, tmpl)
}

// templateKey names a template by what makes initdb's output: the
// binaries (their directory, the postgres binary's size and time), the
// options, and the OS user that owns the files.
func (p *Instance) templateKey(uid int) (string, error) {
	st, err := os.Stat(filepath.Join(p.binDir, "postgres"))
	if err != nil {
		return "", fmt.Errorf("initdb template: %w", err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00%d\x00%d\x00%s", p.binDir, st.Size(), st.ModTime().UnixNano(), uid, strings.Join(initdbArgs(""), " "))
	return "pg-" + hex.EncodeToString(h.Sum(nil))[:16], nil
}

// keepTemplate copies a fresh data directory to tmpl, owners and modes
// kept, through a temporary name and a rename, so that a template is
// either whole or absent; when another process's rename came first, its
// template stays.
func keepTemplate(ctx context.Context, dataDir, tmpl string) error {
	tmp := fmt.Sprintf("%s.tmp%d", tmpl, os.Getpid())
	if err := server.CopyTree(ctx, dataDir, tmp); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("keep the initdb template: %w", err)
	}
	if err := os.Rename(tmp, tmpl); err != nil {
		os.RemoveAll(tmp)
		if errors.Is(err, fs.ErrExist) || errors.Is(err, syscall.ENOTEMPTY) {
			return nil
		}
		return fmt.Errorf("keep the initdb template: %w", err)
	}
	return nil
}

// fromTemplate copies tmpl into p's data directory and gives the superuser
// p's password in single-user mode, where no connection is accepted: the
// server never listens with the template's password. The password reaches
// the backend on its standard input, not a command line.
func (p *Instance) fromTemplate(ctx context.Context, tmpl string) error {
	if err := server.CopyTree(ctx, tmpl, p.dataDir); err != nil {
		return fmt.Errorf("start from the initdb template: %w", err)
	}
	cmd := exec.CommandContext(ctx, filepath.Join(p.binDir, "postgres"), "--single", "-D", p.dataDir, "-F", "postgres")
	cmd.Dir = p.Base
	cmd.Env = p.env()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: p.Cred}
	cmd.Stdin = strings.NewReader("ALTER ROLE postgres PASSWORD '" + p.password + "';\n")
	out, err := cmd.CombinedOutput()
	if err == nil && strings.Contains(string(out), "ERROR:") {
		err = errors.New("the statement failed")
	}
	if err != nil {
		return fmt.Errorf("set the password of a copied cluster (postgres --single): %w: %s", err, server.Redact(strings.TrimSpace(string(out)), p.password))
	}
	return nil
}
