package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
)

// Identifier is a Server that can tell whether another connection reaches
// the same server: one connection holds a session marked with a token,
// the other looks for it. A duet refuses an external twin that is its
// first server under another address.
type Identifier interface {
	// Mark holds a session marked with token until release is called.
	Mark(ctx context.Context, token string) (release func(), err error)
	// Marked says whether a session marked with token is on this server.
	Marked(ctx context.Context, token string) (bool, error)
}

// SameServer says whether a and b are one server: a marks a session, and
// b looks for it.
func SameServer(ctx context.Context, a, b Identifier) (bool, error) {
	var r [8]byte
	_, _ = rand.Read(r[:])
	token := "obsbench-twin-" + hex.EncodeToString(r[:])
	release, err := a.Mark(ctx, token)
	if err != nil {
		return false, err
	}
	defer release()
	return b.Marked(ctx, token)
}
