package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// LogSettings are the settings a capture of a server's stderr log reads
// its lines by.
type LogSettings struct {
	LinePrefix  string // log_line_prefix
	Destination string // log_destination
	Messages    string // lc_messages: the language of the log's messages
}

// ReadLogSettings asks the server at dsn how it writes its log. Any user
// may read these settings.
func ReadLogSettings(ctx context.Context, dsn string) (LogSettings, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return LogSettings{}, fmt.Errorf("parse dsn: %w", err)
	}
	cfg.RuntimeParams["application_name"] = "obsbench-capture"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return LogSettings{}, fmt.Errorf("connect to postgres: %w", err)
	}
	defer conn.Close(ctx)
	var s LogSettings
	err = conn.QueryRow(ctx, "SELECT current_setting('log_line_prefix'), current_setting('log_destination'), current_setting('lc_messages')").Scan(&s.LinePrefix, &s.Destination, &s.Messages)
	return s, err
}
