//go:build unix && !linux

package check

const mapPopulate = 0
