package platform

import "fmt"

// ParseMinOS reads a deployment target, a Slice's MinOS ("11", "11.0",
// "10.12.1"), as the packed X.Y.Z (xxxx.yy.zz) Mach-O's load commands
// hold and validation compares: the recipe refuses by it what validation
// could not hold an object to (a minor of 256 does not fit its byte).
func ParseMinOS(s string) (uint32, error) {
	var parts [3]uint32
	n := 0
	cur, digits := uint32(0), 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '.' {
			if digits == 0 || n == 3 {
				return 0, fmt.Errorf("version %q: expected X, X.Y or X.Y.Z", s)
			}
			parts[n], n, cur, digits = cur, n+1, 0, 0
			continue
		}
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("version %q: expected digits and dots", s)
		}
		cur = cur*10 + uint32(s[i]-'0')
		digits++
		if cur > 0xffff {
			return 0, fmt.Errorf("version %q: component too large", s)
		}
	}
	if parts[1] > 0xff || parts[2] > 0xff {
		return 0, fmt.Errorf("version %q: minor and patch must be below 256", s)
	}
	return parts[0]<<16 | parts[1]<<8 | parts[2], nil
}
