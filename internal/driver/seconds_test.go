package driver

import "testing"

// Buckets rise with the latency up to the driver's largest, never pass
// the last one, and the middle of a value's bucket is within 6.25% of it.
func TestSecondBuckets(t *testing.T) {
	prev := 0
	for us := int64(1); us <= maxLatencyMicros; us += 1 + us/97 {
		b := bucketOf(us)
		if b < prev || b >= secondBuckets {
			t.Fatalf("bucketOf(%d) = %d after %d; want rising, below %d", us, b, prev, secondBuckets)
		}
		prev = b
		if mid := bucketMiddle(b); mid < float64(us)*0.9375 || mid > float64(us)*1.0625 {
			t.Errorf("bucketOf(%d) = %d, middle %v; want within 6.25%% of %d", us, b, mid, us)
		}
	}
}
