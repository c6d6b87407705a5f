package server

import (
	"context"
	"fmt"
	"os/exec"
)

// CopyTree copies the directory from to to, owners and modes kept
// (cp -a): a data directory copied whole, for a server of its own.
func CopyTree(ctx context.Context, from, to string) error {
	if out, err := exec.CommandContext(ctx, "cp", "-a", from, to).CombinedOutput(); err != nil {
		return fmt.Errorf("copy %s: %w: %s", from, err, out)
	}
	return nil
}
