package platform

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseMinOS reads a deployment target, a Slice's MinOS ("11", "11.0",
// "10.12.1"), as the packed X.Y.Z (xxxx.yy.zz) Mach-O's load commands
// hold and validation compares: the recipe refuses by it what validation
// could not hold an object to (a minor of 256 does not fit its byte).
func ParseMinOS(s string) (uint32, error) {
	var parts [3]uint32
	for i, p := range strings.Split(s, ".") {
		if strings.Trim(p, "0123456789") != "" {
			return 0, fmt.Errorf("version %q: expected digits and dots", s)
		}
		n, err := strconv.ParseUint(p, 10, 16)
		if p != "" && err != nil {
			return 0, fmt.Errorf("version %q: component too large", s)
		}
		if p == "" || i == len(parts) {
			return 0, fmt.Errorf("version %q: expected X, X.Y or X.Y.Z", s)
		}
		parts[i] = uint32(n)
	}
	if parts[1] > 0xff || parts[2] > 0xff {
		return 0, fmt.Errorf("version %q: minor and patch must be below 256", s)
	}
	return parts[0]<<16 | parts[1]<<8 | parts[2], nil
}
