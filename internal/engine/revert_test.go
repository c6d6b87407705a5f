package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// A failed Apply reverts what it changed, even when its context was
// cancelled, and says so if the revert fails too; a successful one
// reverts nothing.
func TestRevertIfFailed(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	reverts := 0
	revert := func(ctx context.Context) error {
		reverts++
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return errors.New("undo refused")
	}
	var err error
	RevertIfFailed(ctx, &err, revert)
	if err != nil || reverts != 0 {
		t.Errorf("after success: err %v, %d reverts; want none", err, reverts)
	}
	applyErr := errors.New("apply failed")
	err = applyErr
	RevertIfFailed(ctx, &err, revert)
	if reverts != 1 || !errors.Is(err, applyErr) || !strings.Contains(err.Error(), "reverting the partial change failed: undo refused") {
		t.Errorf("after failure: err %v, %d reverts; want one revert, outside the cancelled context, its failure added", err, reverts)
	}
}
