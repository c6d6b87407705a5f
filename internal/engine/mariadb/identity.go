package mariadb

import (
	"context"
	"fmt"
)

// Mark holds the user lock named token (GET_LOCK), which is server-wide
// (engine.Identifier).
func (s *Server) Mark(ctx context.Context, token string) (func(), error) {
	conn, done, err := s.control(ctx)
	if err != nil {
		return nil, err
	}
	var got int
	if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, 0)", token).Scan(&got); err != nil || got != 1 {
		done()
		return nil, fmt.Errorf("take the lock %s: got %d, %v", token, got, err)
	}
	return func() { done() }, nil
}

// Marked says whether a session holds the user lock named token.
func (s *Server) Marked(ctx context.Context, token string) (bool, error) {
	conn, done, err := s.control(ctx)
	if err != nil {
		return false, err
	}
	defer done()
	var free int
	err = conn.QueryRowContext(ctx, "SELECT IS_FREE_LOCK(?)", token).Scan(&free)
	return free == 0, err
}
