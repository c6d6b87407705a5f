package pgbench

import (
	"math"
	"math/bits"
)

// PRNG is PostgreSQL's pg_prng (src/common/pg_prng.c): xoroshiro128**
// seeded through splitmix64. permute() must use exactly this generator to
// give pgbench's values; the random functions use it so that their
// streams behave as pgbench's do.
type PRNG struct{ s0, s1 uint64 }

// NewPRNG seeds a generator as pg_prng_seed does.
func NewPRNG(seed uint64) *PRNG {
	p := &PRNG{}
	p.s0 = splitmix64(&seed)
	p.s1 = splitmix64(&seed)
	if p.s0 == 0 && p.s1 == 0 { // pg_prng_seed_check: never all zeroes
		p.s0 = 0x5851F42D4C957F2D
	}
	return p
}

func splitmix64(state *uint64) uint64 {
	*state += 0x9E3779B97F4A7C15
	v := *state
	v = (v ^ (v >> 30)) * 0xBF58476D1CE4E5B9
	v = (v ^ (v >> 27)) * 0x94D049BB133111EB
	return v ^ (v >> 31)
}

// Uint64 is the next output (xoroshiro128ss).
func (p *PRNG) Uint64() uint64 {
	s0 := p.s0
	sx := p.s1 ^ s0
	v := bits.RotateLeft64(s0*5, 7) * 9
	p.s0 = bits.RotateLeft64(s0, 24) ^ sx ^ (sx << 16)
	p.s1 = bits.RotateLeft64(sx, 37)
	return v
}

// Range is uniform in [min, max] by rejection sampling on a bit mask, as
// pg_prng_uint64_range.
func (p *PRNG) Range(min, max uint64) uint64 {
	if max <= min {
		return min
	}
	r := max - min
	shift := uint(bits.LeadingZeros64(r)) // 63 - the leftmost one bit of r
	for {
		if v := p.Uint64() >> shift; v <= r {
			return min + v
		}
	}
}

// Float64 is uniform in [0, 1) with 52 random bits (pg_prng_double).
func (p *PRNG) Float64() float64 {
	return math.Ldexp(float64(p.Uint64()>>(64-52)), -52)
}

// Normal is a standard normal variate by Box-Muller
// (pg_prng_double_normal).
func (p *PRNG) Normal() float64 {
	u1 := 1.0 - p.Float64() // (0, 1]
	u2 := p.Float64()
	return math.Sqrt(-2.0*math.Log(u1)) * math.Sin(2.0*math.Pi*u2)
}
