package postgres

// SetStream sets how fast obsbench reads the server's stderr (bytes per
// second, 0: as fast as it can) and whether the server drops messages
// rather than wait when the pipe is full.
func (p *Instance) SetStream(rate int64, lossy bool) error {
	p.stream.SetRate(rate)
	return p.stream.SetLossy(lossy)
}

// StreamLog is the file obsbench appends the server's stderr to.
func (p *Instance) StreamLog() string { return p.stream.Path() }

// ServerFaults counts what the server lost without the workload noticing:
// writes its slow directory refused because it was full, and the server's
// own complaints on its stderr that it could not write its log. It
// returns the count so far and a description of the latest.
func (p *Instance) ServerFaults() (int64, string) {
	n, last := p.stream.Faults()
	if r, msg := p.Refused(); r > 0 {
		n, last = n+r, msg
	}
	return n, last
}
