package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/obsbench/obsbench/internal/cgroup"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/journal"
	"github.com/obsbench/obsbench/internal/spec"
)

// restoreCmd undoes what a killed obsbench left changed on external
// servers, from its journals.
func restoreCmd(ctx context.Context, args []string, stdout, stderr io.Writer, stateDir string) error {
	fs := commandFlags("restore")
	file := fs.String("journal", "", "journal to restore (default: every journal in "+stateDir+" whose obsbench is no longer running)")
	dsn := fs.String("dsn", "", "connect with this DSN instead of the journal's, which has no password: give one with this flag (postgres: or in PGPASSWORD or ~/.pgpass)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	paths := []string{*file}
	if *file == "" {
		var err error
		if paths, err = journal.List(stateDir); err != nil {
			return err
		}
	}
	restored := 0
	for _, path := range paths {
		header, pending, err := journal.Read(path)
		if err != nil {
			if *file != "" {
				return usagef("--journal: %v", err)
			}
			return err
		}
		if *file == "" && journal.WriterAlive(header) {
			fmt.Fprintf(stdout, "%s: obsbench %d is still running and will revert its own changes; skipped\n", path, header.PID)
			continue
		}
		server := header.Server
		if *dsn != "" {
			server = *dsn
		}
		if len(pending) > 0 {
			raws := make([]json.RawMessage, len(pending))
			seqs := make([]int, len(pending))
			for i, p := range pending {
				raws[i], seqs[i] = p.Change, p.Seq
			}
			needRestart, err := undo(ctx, server, raws)
			if err != nil {
				return fmt.Errorf("restore %s on %s: %w (the journal is kept; run restore again)", path, engine.RedactDSN(server), err)
			}
			if err := journal.MarkUndone(path, seqs); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "%s: undid %d change(s) on %s\n", path, len(pending), engine.RedactDSN(server))
			if len(needRestart) > 0 {
				fmt.Fprintf(stdout, "  %s take effect only after a server restart; restart it to complete the restore\n", strings.Join(needRestart, ", "))
			}
			restored++
			continue
		}
		if err := journal.MarkUndone(path, nil); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: nothing left to undo; removed\n", path)
	}
	if restored == 0 && *file == "" {
		fmt.Fprintf(stdout, "nothing to restore in %s\n", stateDir)
	}
	return nil
}

// undo undoes journaled changes with the engine that made them: each
// record names its engine, but for PostgreSQL's from before they did,
// which are the default engine's; a duet's control groups name "cgroup".
func undo(ctx context.Context, server string, changes []json.RawMessage) (needRestart []string, err error) {
	var first struct {
		Engine string `json:"engine"`
	}
	if len(changes) > 0 {
		_ = json.Unmarshal(changes[0], &first)
	}
	switch first.Engine {
	case "":
		first.Engine = spec.Default().Engine
	case cgroup.Engine: // a duet's control groups, not a server
		return nil, cgroup.Undo(changes)
	}
	eng, err := engine.Lookup(first.Engine)
	if err != nil {
		return nil, err
	}
	return eng.Undo(ctx, server, changes)
}
