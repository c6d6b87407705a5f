package pgbench

import (
	"math"
	"math/bits"
)

// Hash constants (pgbench.c).
const (
	fnvPrime       = 0x100000001b3
	fnvOffsetBasis = 0xcbf29ce484222325
	mm2Mul         = 0xc6a4a7935bd1e995
	mm2MulTimes8   = 0x35253c9ade8f4ca8
	mm2Rot         = 47
)

// HashFNV1a is pgbench's hash_fnv1a: FNV-1a over the value's 8 bytes,
// low byte first.
func HashFNV1a(val int64, seed uint64) int64 {
	result := uint64(fnvOffsetBasis) ^ seed
	for i := 0; i < 8; i++ {
		octet := uint64(val & 0xff)
		val >>= 8
		result = (result ^ octet) * fnvPrime
	}
	return int64(result)
}

// HashMurmur2 is pgbench's hash_murmur2 (and hash): MurmurHash64A of one
// 8-byte value.
func HashMurmur2(val int64, seed uint64) int64 {
	result := seed ^ mm2MulTimes8
	k := uint64(val)
	k *= mm2Mul
	k ^= k >> mm2Rot
	k *= mm2Mul
	result ^= k
	result *= mm2Mul
	result ^= result >> mm2Rot
	result *= mm2Mul
	result ^= result >> mm2Rot
	return int64(result)
}

// Permute is pgbench's permute(val, size, seed): a pseudorandom
// permutation of [0, size), six rounds of multiply, xor and rotate on
// overlapping halves and a random offset, from pg_prng seeded with seed.
func Permute(val, isize, seed int64) int64 {
	if isize < 2 {
		return 0
	}
	rng := NewPRNG(uint64(seed))
	size := uint64(isize)
	v := uint64(val) % size
	masklen := uint(63 - bits.LeadingZeros64(size))
	mask := uint64(1)<<masklen - 1
	for i := 0; i < 6; i++ {
		m := rng.Uint64()&mask | 1
		r := rng.Uint64() & mask
		if v <= mask {
			v = ((v * m) ^ r) & mask
			v = ((v << 1) & mask) | (v >> (masklen - 1))
		}
		m = rng.Uint64()&mask | 1
		r = rng.Uint64() & mask
		t := size - 1 - v
		if t <= mask {
			t = ((t * m) ^ r) & mask
			t = ((t << 1) & mask) | (t >> (masklen - 1))
			v = size - 1 - t
		}
		r = rng.Range(0, size-1)
		v = (v + r) % size
	}
	return int64(v)
}

// random evaluates the random functions over [min, max].
func random(fn string, a []Value, env *Env) (Value, error) {
	lo, hi, err := pair(a[0], a[1], toInt)
	if err != nil {
		return Value{}, err
	}
	if lo > hi {
		return Value{}, evalErr("empty range given to random")
	}
	if d := hi - lo; d < 0 || d == math.MaxInt64 { // delta+1 must not overflow
		return Value{}, evalErr("random range is too large")
	}
	rng := env.Rand
	if fn == "random" {
		return Value{Kind: Int, I: lo + int64(rng.Range(0, uint64(hi-lo)))}, nil
	}
	param, err := toDouble(a[2])
	if err != nil {
		return Value{}, err
	}
	width := float64(hi - lo + 1)
	switch fn {
	case "random_gaussian":
		if param < minGaussianParam {
			return Value{}, evalErr("gaussian parameter must be at least %f (not %f)", minGaussianParam, param)
		}
		var stdev float64
		for {
			if stdev = rng.Normal(); stdev >= -param && stdev < param {
				break
			}
		}
		return Value{Kind: Int, I: lo + int64(width*((stdev+param)/(param*2.0)))}, nil
	case "random_zipfian":
		if param < minZipfianParam || param > maxZipfianParam {
			return Value{}, evalErr("zipfian parameter must be in range [%.3f, %.0f] (not %f)", minZipfianParam, maxZipfianParam, param)
		}
		return Value{Kind: Int, I: lo - 1 + zipfian(rng, hi-lo+1, param)}, nil
	default: // random_exponential
		if param <= 0.0 {
			return Value{}, evalErr("exponential parameter must be greater than zero (not %f)", param)
		}
		cut := math.Exp(-param)
		uniform := 1.0 - rng.Float64()
		r := -math.Log(cut+(1.0-cut)*uniform) / param
		return Value{Kind: Int, I: lo + int64(width*r)}, nil
	}
}

// zipfian draws from 1..n by Devroye's rejection method, as pgbench's
// computeIterativeZipfian.
func zipfian(rng *PRNG, n int64, s float64) int64 {
	if n <= 1 {
		return 1
	}
	b := math.Pow(2.0, s-1.0)
	for {
		u, v := rng.Float64(), rng.Float64()
		x := math.Floor(math.Pow(u, -1.0/(s-1.0)))
		t := math.Pow(1.0+1.0/x, s-1.0)
		if v*x*(t-1.0)/(b-1.0) <= t/b && x <= float64(n) {
			return int64(x)
		}
	}
}
