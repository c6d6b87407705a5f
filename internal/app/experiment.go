package app

import (
	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/workload"
)

// What a composition of experiments (a study) reads of one; its steps
// are the methods Run, PrintPlan, Sweep, Gate, GateSweep and ThreadsFor.

// WorkloadMeta is the workload the experiment runs, its parameters set.
func (c Experiment) WorkloadMeta() workload.Meta { return c.wl }

// Dataset is the workload's dataset at its scale.
func (c Experiment) Dataset() dataset.Dataset { return c.ds }

// ObserverList is the baseline and the observers compared with it.
func (c Experiment) ObserverList() []observer.Observer { return c.observers }

// Dialect is the SQL dialect of the experiment's engine.
func (c Experiment) Dialect() workload.Dialect { return c.info.Dialect }
