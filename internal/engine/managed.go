package engine

import (
	"context"
	"fmt"
)

// Process is a server process obsbench started.
type Process interface {
	Restart(ctx context.Context) error
	Stop() error
	PID() (int, error)
}

// Companion is a server that follows a managed one: a standby or replica.
type Companion interface {
	// WaitStreaming waits until it follows its primary again.
	WaitStreaming(ctx context.Context) error
	Stop() error
	PID() (int, error)
}

// Managed is what every engine's managed server does alike: restart
// before every run (Resetter), count its companion's CPU as
// the system's (Companioned), and stop both at the end. An
// engine's managed server type embeds it.
type Managed struct {
	Proc Process
	// Companion is nil when there is none; CompanionName says what it is
	// ("standby", "replica").
	Companion     Companion
	CompanionName string
	Log           func(string, ...any)
}

// Reset restarts the server before a run, and waits for its companion to
// follow it again.
func (m *Managed) Reset(ctx context.Context) error {
	if err := m.Proc.Restart(ctx); err != nil {
		return err
	}
	if m.Companion != nil {
		return m.Companion.WaitStreaming(ctx)
	}
	return nil
}

// ServerPID is the server's main process, 0 if it cannot be read.
func (m *Managed) ServerPID() int {
	pid, err := m.Proc.PID()
	if err != nil {
		return 0
	}
	return pid
}

// CompanionPIDs is the companion's main process: its CPU is the system's.
func (m *Managed) CompanionPIDs() []int {
	if m.Companion == nil {
		return nil
	}
	if pid, err := m.Companion.PID(); err == nil {
		return []int{pid}
	}
	return nil
}

// Close stops the companion, then the server.
func (m *Managed) Close() error {
	if m.Companion != nil {
		if err := m.Companion.Stop(); err != nil && m.Log != nil {
			m.Log("stopping the %s: %v", m.CompanionName, err)
		}
	}
	if err := m.Proc.Stop(); err != nil {
		return fmt.Errorf("stopping the managed server: %w", err)
	}
	return nil
}
