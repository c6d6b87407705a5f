// The outsider: commands run as another account on the machine (nobody),
// for the tests that check that nothing obsbench starts or writes lets
// such an account in.

package servertest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// OutsiderAccount is the account the commands run as.
const OutsiderAccount = "nobody"

// Attempt is one command run as the outsider and what came of it.
type Attempt struct {
	What   string // what was tried, in words
	Output string
	Err    error // nil: the command succeeded
}

// AsOutsider runs name with args as the outsider, with an environment of its
// own (no variable of the test's, such as a password, reaches it), for at
// most 20 seconds.
func AsOutsider(t testing.TB, what, name string, args ...string) Attempt {
	t.Helper()
	uid, gid := ids(t)
	return asOutsider(uid, gid, what, name, args...)
}

func asOutsider(uid, gid uint32, what, name string, args ...string) Attempt {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/nonexistent", "LC_ALL=C"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid, Groups: []uint32{}}}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return Attempt{What: what, Output: strings.TrimSpace(out.String()), Err: err}
}

// Command is a command to run as the outsider: What is what it tries, in
// words.
type Command struct {
	What, Name string
	Args       []string
}

// AsOutsiderAll runs cmds as the outsider (AsOutsider), several at a time:
// each waits on a refusal, a process start and the server's answer, which
// a loaded machine makes slow one after the other. The attempts are in
// cmds' order.
func AsOutsiderAll(t testing.TB, cmds []Command) []Attempt {
	t.Helper()
	uid, gid := ids(t)
	attempts := make([]Attempt, len(cmds))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, c := range cmds {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			attempts[i] = asOutsider(uid, gid, c.What, c.Name, c.Args...)
		}()
	}
	wg.Wait()
	return attempts
}

// MustBeRefused fails the test for every attempt that succeeded, or that
// failed for another reason than a refusal: its output must hold one of
// refusals (a command that did not run at all proves nothing).
func MustBeRefused(t testing.TB, refusals []string, attempts ...Attempt) {
	t.Helper()
	for _, a := range attempts {
		switch {
		case a.Err == nil:
			t.Errorf("as %s, %s succeeded:\n%s", OutsiderAccount, a.What, a.Output)
		case !containsAny(a.Output, refusals):
			t.Errorf("as %s, %s failed, but not with a refusal (%v): %s", OutsiderAccount, a.What, a.Err, a.Output)
		default:
			t.Logf("as %s, %s: refused (%s)", OutsiderAccount, a.What, firstLine(a.Output))
		}
	}
}

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// OutsiderUID is the outsider's user id.
func OutsiderUID(t testing.TB) int {
	uid, _ := ids(t)
	return int(uid)
}

func ids(t testing.TB) (uint32, uint32) {
	t.Helper()
	SkipShort(t) // in case the test did not
	if os.Geteuid() != 0 {
		t.Fatalf("acting as %s needs root (the README's test command runs as root)", OutsiderAccount)
	}
	u, err := user.Lookup(OutsiderAccount)
	if err != nil {
		t.Fatalf("account %s: %v", OutsiderAccount, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return uint32(uid), uint32(gid)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
