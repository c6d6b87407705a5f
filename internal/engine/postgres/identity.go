package postgres

import "context"

// Mark holds a session whose application_name is token (engine.Identifier).
func (s *Server) Mark(ctx context.Context, token string) (func(), error) {
	conn, err := s.connectAs(ctx, token)
	if err != nil {
		return nil, err
	}
	return func() { conn.Close(context.WithoutCancel(ctx)) }, nil
}

// Marked says whether a session named token is on this server, in any
// database: pg_stat_activity lists every session of the server.
func (s *Server) Marked(ctx context.Context, token string) (bool, error) {
	conn, err := s.connect(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Close(ctx)
	var seen bool
	err = conn.QueryRow(ctx, "SELECT count(*) > 0 FROM pg_stat_activity WHERE application_name = $1", token).Scan(&seen)
	return seen, err
}
