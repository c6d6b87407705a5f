package main

import (
	"maps"
	"slices"
	"strings"

	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/observer"
)

// observerPlan says, without a server, what observers -v tells of an observer:
// what of it needs a restart, how --method auto measures it, and whether
// it can run on an external server. It follows each engine's documented
// restart rules (StaticSplit), which their tests check against real
// servers; a server where a held part is already in force (the logging
// collector on) holds nothing, and auto then alternates.
func observerPlan(eng engine.Engine, o observer.Observer) []string {
	if o.Name == observer.Baseline {
		return nil
	}
	info := eng.Info()
	held := o // an engine without a split applies each observer for a whole run
	var sw observer.Observer
	if sp, ok := eng.(engine.Splitter); ok {
		held, sw = sp.StaticSplit(o)
	}
	var restart []string
	if len(held.Preload) > 0 {
		restart = append(restart, "preload "+strings.Join(held.Preload, ","))
	}
	stays := slices.Clone(restart)
	rs, knows := eng.(engine.Restarter)
	for _, k := range slices.Sorted(maps.Keys(held.Settings)) {
		v := held.Settings[k]
		stays = append(stays, k+"="+v)
		if _, alt := o.AlternateOff[k]; alt || knows && !rs.StartOnly(k) {
			continue // held, as a session copies it, but no restart
		}
		restart = append(restart, k+"="+v)
	}
	kind := info.AddOn + " "
	for _, e := range held.Extensions {
		stays = append(stays, kind+e)
	}
	if held.Sink != nil {
		stays = append(stays, "its sink ("+held.Sink.String()+")")
	}
	switchable := len(sw.Settings) > 0 || len(sw.EnableSQL) > 0
	out := []string{"needs a restart: none"}
	if !info.RestartsApply {
		out[0] = "needs a restart: none (applied for a whole run, reverted after)"
	} else if len(restart) > 0 {
		out[0] = "needs a restart: " + strings.Join(restart, " ")
	}
	switch {
	case !switchable && len(restart) == 0 && len(held.Settings) > 0:
		out = append(out, "--method auto: whole, in rounds (a session copies its settings when it starts: no reload switches them for sessions already running)")
	case !switchable:
		out = append(out, "--method auto: whole, in rounds (no reload switches it)")
	case len(stays) > 0:
		out = append(out, "--method auto: whole in rounds, and its switchable part ("+strings.Join(slices.Sorted(maps.Keys(sw.Settings)), ", ")+
			") by alternation with "+strings.Join(stays, " ")+" in force on both sides")
	default:
		out = append(out, "--method auto: whole, by alternation (a reload switches all of it)")
	}
	switch {
	case o.Sink != nil:
		out = append(out, "on --dsn: no (its sink, "+o.Sink.String()+", is provided on a managed server only)")
	case o.Consumer != nil:
		out = append(out, "on --dsn: no (its consumer, "+o.Consumer.String()+", runs beside a managed server only)")
	case len(restart) > 0 && info.RestartsApply:
		out = append(out, "on --dsn: only where "+strings.Join(restart, " ")+" is already in force (obsbench restarts only servers it manages)")
	default:
		out = append(out, "on --dsn: yes")
	}
	return out
}
